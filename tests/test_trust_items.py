"""Issue 40 (trust under attack and mistakes), items 3-12: one test per item, named after it."""

import os
import stat

from ftamem_core import editing
from ftamem_core.store import Store

from conftest import make_doc, make_unit, random_vectors

SECRET = "Zebulon-7741 told nobody about the river"


def files_hold(db_path, text: str) -> list[str]:
    """Which of the database's files (the database, its -wal) hold ``text`` right now."""
    found = []
    for suffix in ("", "-wal"):
        path = f"{db_path}{suffix}"
        if os.path.exists(path) and text.encode() in open(path, "rb").read():
            found.append(os.path.basename(path))
    return found


def test_item7_delete_scrubs_open_store(tmp_path):
    db = tmp_path / "memory.db"
    store = Store(db)
    store.ingest([make_doc("c1")])
    kept, gone = store.add_units("c1", [make_unit("c1", "A kept unit."), make_unit("c1", SECRET)], random_vectors(2))
    edited = store.add_units("c1", [make_unit("c1", "Mariposa-5521 was the old wording")], random_vectors(1))[0]
    assert files_hold(db, SECRET)  # written: the test can see it
    editing.delete_unit(store, "c1", gone, "tester", "said by mistake")
    assert files_hold(db, SECRET) == []  # the store is still open
    unit = store.get_unit("c1", edited)
    editing.edit_unit(store, None, "c1", edited, {"fact.text": "The new wording."}, unit.version, "tester", "typo")
    assert os.path.getsize(f"{db}-wal") == 0  # checkpointed at once after a text edit too
    assert store.get_unit("c1", kept).fact.text == "A kept unit."
    store.close()


def test_item10_never_chmods_a_folder_the_store_did_not_create(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # like /tmp
    Store(shared / "x.db").close()
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
    Store(shared / "new" / "deeper" / "y.db").close()
    for made in (shared / "new", shared / "new" / "deeper"):
        assert stat.S_IMODE(os.stat(made).st_mode) == 0o700  # created by the store: owner only
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
