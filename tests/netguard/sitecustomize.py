"""On PYTHONPATH with FTAMEM_NET_GUARD_LOG set: every outbound attempt of this process is refused
and appended to that file (the browser test's server)."""

import os
import sys

if os.environ.get("FTAMEM_NET_GUARD_LOG"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from guard import install

    def _record(text, _path=os.environ["FTAMEM_NET_GUARD_LOG"]):
        with open(_path, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")

    install(_record)
