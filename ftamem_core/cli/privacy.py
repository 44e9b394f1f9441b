"""Commands over a person's rights and the access to their case: consent, export, import, deletion,
erasure, retention, passwords and the access log."""

from __future__ import annotations

import json
import sys

from ..config import Settings
from ..storage.store import StoreError
from .common import open_store, require_case, who_runs
from .tables import table


def cmd_consent(args, settings: Settings):
    from ..governance import consent

    store = open_store(settings)
    require_case(store, args.case)
    if args.action != "show":
        consent.record(store, args.case, consent.ACTIONS[args.action], who_runs(args), args.note)
    rows = consent.log(store, args.case)
    current = consent.state(store, args.case)
    return {"case": args.case, **current, "log": rows}, (
        f"consent {current['state']}"
        + (f" (by {current['who']}, {current['at']})" if current["at"] else "")
        + "\n"
        + table(rows, ["at", "state", "who", "note"])
    )


def cmd_export(args, settings: Settings):
    from ..governance.privacy import export_case, write_export

    store = open_store(settings)
    require_case(store, args.case)
    if args.out is None:
        print(json.dumps(export_case(store, args.case), ensure_ascii=False, indent=1))
        return None
    path = write_export(store, args.case, args.out)
    return {"case": args.case, "file": str(path)}, f"wrote {path} (readable by you only)"


def cmd_import(args, settings: Settings):
    from ..governance.privacy import case_counts, read_import

    store = open_store(settings)
    case_id = read_import(store, args.file, settings.input.max_upload_mb)
    counts = case_counts(store, case_id)
    return {"case": case_id, "counts": counts}, f"imported case {case_id!r}: " + ", ".join(
        f"{n} {t}" for t, n in counts.items() if n
    )


def cmd_delete_unit(args, settings: Settings):
    from ..governance.editing import delete_unit

    store = open_store(settings)
    require_case(store, args.case)
    delete_unit(store, args.case, args.id, who_runs(args), args.reason)
    return {"case": args.case, "deleted_unit": args.id}, f"deleted unit m{args.id}"


def cmd_delete_link(args, settings: Settings):
    from ..governance.editing import delete_link

    store = open_store(settings)
    require_case(store, args.case)
    delete_link(store, args.case, args.id, who_runs(args), args.reason)
    return {"case": args.case, "deleted_link": args.id}, f"deleted link {args.id}"


def cmd_erase(args, settings: Settings):
    from ..governance.privacy import erase_case

    store = open_store(settings)
    require_case(store, args.case)
    if not args.yes:
        if not sys.stdin.isatty():
            raise StoreError("erase asks for confirmation: pass --yes when not in a terminal")
        typed = input(f"Erase case {args.case!r} and everything derived from it, for good? Type its id to confirm: ")
        if typed != args.case:
            raise StoreError("not confirmed; nothing was erased")
    counts = erase_case(store, args.case, who_runs(args), args.reason)
    return {"case": args.case, "erased": counts}, f"erased case {args.case!r}: " + ", ".join(
        f"{n} {t}" for t, n in counts.items() if n
    )


def cmd_purge_expired(args, settings: Settings):
    from ..governance.privacy import purge_expired, skipped_message

    skipped: list[str] = []
    gone = purge_expired(open_store(settings), settings.governance.retention_days, skipped=skipped)
    text = "\n".join([f"erased {c}" for c in gone] + ([skipped_message(skipped)] if skipped else []))
    return {"erased": gone, "skipped": skipped}, text or "no case past its retention period"


def cmd_hash_password(args, settings: Settings):
    import getpass

    from ..governance.auth import hash_password

    if sys.stdin.isatty():
        first, second = getpass.getpass("Password: "), getpass.getpass("Again: ")
        if first != second:
            raise StoreError("the two passwords differ")
    else:
        first = sys.stdin.readline().rstrip("\n")
    if not first:
        raise StoreError("an empty password")
    hashed = hash_password(first)
    return {"hash": hashed}, hashed


def cmd_access_log(args, settings: Settings):
    from ..governance.auth import access_log

    store = open_store(settings)
    if args.case:
        require_case(store, args.case)
    rows = access_log(store, args.case)
    return rows, table(rows, ["at", "case_id", "who", "action", "detail"])
