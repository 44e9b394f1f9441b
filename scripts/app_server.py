"""Start the app: ``streamlit run app.py`` with multipage navigation fixed to st.navigation.

Streamlit treats a ``pages/`` folder beside the main script as the legacy multipage layout until
the main script first calls ``st.navigation``; a browser that opens ``/graph`` before anyone has
opened ``/`` would get the bare page file without app.py's sidebar (seen in headless Chromium).
Turning the legacy layout off before the server starts removes that race.
"""

import sys
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

PagesManager.uses_pages_directory = False

if __name__ == "__main__":
    app = str(Path(__file__).resolve().parents[1] / "app.py")
    sys.exit(cli.main(["run", app, *sys.argv[1:]], standalone_mode=False))
