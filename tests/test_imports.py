"""The import graph of ftamem_core has no circles: data flows one way, and a module can be read
after the modules it imports. Every import counts, at module level or inside a function."""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ftamem_core"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = here.split(".") if is_package else here.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, name, path.name == "__init__.py")
                # "from . import grounding" imports a module; "from .x import name" imports x
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:  # a.b.c -> a.b when c is a name in a.b
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("ftamem_core"):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_imports_at_module_level_and_in_functions():
    graph = import_graph()
    assert "ftamem_core.storage.store" in graph["ftamem_core.construction.builder"]  # module level
    assert (
        "ftamem_core.construction.repairs.checks" in graph["ftamem_core.construction.builder"]
    )  # from .repairs.checks import ...
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_ftamem_core_has_no_import_circles():
    assert cycles(import_graph()) == []


# No SQL outside ftamem_core/storage/: the modules above it, the app and its pages call named
# store functions (one module per aggregate in storage/), never a query, a connection or a table.
ROOT = PACKAGE.parent
STORAGE = PACKAGE / "storage"
_SQL_CALLS = {"execute", "executemany", "executescript", "query", "_rows", "_case_rows", "_rows_by_id", "rows_by_id"}
_SQL_TEXT = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|PRAGMA|CREATE|DROP|ALTER|VACUUM|BEGIN|COMMIT)\s")


def sql_uses(source: str) -> list[str]:
    """Each use of SQL in a module's source, as "line: what"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SQL_CALLS:
            found.append(f"{node.lineno}: .{node.func.attr}(...)")
        elif isinstance(node, ast.Attribute) and node.attr == "conn":  # the store's sqlite3 connection
            found.append(f"{node.lineno}: .conn")
        elif (
            isinstance(node, (ast.Subscript, ast.Attribute))
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "db"
        ):  # its sqlite-utils database (a bare `args.db` is a path)
            found.append(f"{node.lineno}: .db")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{node.lineno}: import {n}" for n in names if n.split(".")[0] == "sqlite_utils"]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL_TEXT.match(node.value):
            found.append(f"{node.lineno}: {node.value.strip()[:40]!r}")
    return found


def _outside_storage() -> list[Path]:
    modules = [p for p in PACKAGE.rglob("*.py") if STORAGE not in p.parents]
    return modules + [ROOT / "app.py", ROOT / "ui.py", ROOT / "appstate.py", *sorted((ROOT / "pages").glob("*.py"))]


def test_the_sql_check_finds_a_query_a_connection_and_sql_text():
    assert len(sql_uses('store.conn.execute("DELETE FROM units WHERE id = ?", (1,))')) == 3
    assert sql_uses("rows = store._rows('x')") == ["1: ._rows(...)"]
    assert sql_uses("n = store.db['units'].count") == ["1: .db"]
    assert sql_uses("import sqlite_utils") == ["1: import sqlite_utils"]
    assert len(sql_uses("store.db.query('x')")) == 2  # a call and the database
    assert sql_uses("store.units(case_id); Store(args.db); settings.storage.db_path; 'Selected units'") == []


def test_no_sql_outside_storage():
    uses = {str(p.relative_to(ROOT)): sql_uses(p.read_text(encoding="utf-8")) for p in _outside_storage()}
    assert {path: found for path, found in uses.items() if found} == {}


# The app's session and URL state is appstate.py's: app.py, ui.py and the pages read and write it
# through appstate's named functions and key constants, never st.session_state or st.query_params.
STATE = {"session_state", "query_params"}


def state_uses(source: str) -> list[str]:
    """Each direct use of the session's or the URL's state in a module's source, as "line: what"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in STATE:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in STATE]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
            found += [f"{node.lineno}: getattr" for a in node.args if isinstance(a, ast.Constant) and a.value in STATE]
    return found


def test_the_state_check_finds_the_session_and_the_url():
    assert state_uses('st.session_state["case_id"] = "x"') == ["1: .session_state"]
    assert state_uses("case = st.query_params.get('case')") == ["1: .query_params"]
    assert state_uses("from streamlit import session_state as s") == ["1: import session_state"]
    assert state_uses("s = getattr(st, 'session_state')") == ["1: getattr"]
    assert state_uses("appstate.put(appstate.CASE, 'x'); at.session_state_x") == []


def test_only_appstate_touches_the_session_state():
    app = [ROOT / "app.py", ROOT / "ui.py", *sorted((ROOT / "pages").glob("*.py"))]
    uses = {str(p.relative_to(ROOT)): state_uses(p.read_text(encoding="utf-8")) for p in app}
    assert {path: found for path, found in uses.items() if found} == {}
    assert state_uses((ROOT / "appstate.py").read_text(encoding="utf-8"))  # the check sees where it is
