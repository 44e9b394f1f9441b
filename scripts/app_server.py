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

# What must hold wherever the server is started from (.streamlit/config.toml is read only from the
# working directory): nothing leaves the machine, no table export, uploads within the setting.
SAFE = ["--browser.gatherUsageStats=false", "--server.headless=true", "--client.disableDataExport=true"]

if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from ftamem_core.config import load_settings

    from ftamem_core.governance.auth import start_problem

    settings = load_settings()
    address = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--server.address=")), None) or next(
        (b for a, b in zip(sys.argv[1:], sys.argv[2:]) if a == "--server.address"), "127.0.0.1"
    )
    problem = start_problem(address, settings.governance.auth.users, settings.governance.auth.oidc)
    if problem:
        sys.exit(f"app_server: refusing to start: {problem}")
    limit = f"--server.maxUploadSize={settings.input.max_upload_mb}"
    sys.exit(cli.main(["run", str(root / "app.py"), *SAFE, limit, *sys.argv[1:]], standalone_mode=False))
