"""No Hearth module imports itself back, through any chain (DESIGN.md "Layers").

The import-linter contract "No import cycles" (pyproject.toml, `lint-imports`) keeps the
modules and subpackages of each package acyclic; this test also sees what that contract
cannot: a package's `__init__` and a module inside it importing each other
(`storage/__init__.py` -> `storage/unit_of_work.py` -> `storage`). Imports under
`if TYPE_CHECKING:` count, as they do for the layers: a type a module names is a module it
depends on, and such a circle becomes a real one the day the name is used at run time.
"""

from __future__ import annotations

import grimp

PACKAGES = ("core", "storage", "generation", "config", "services", "adapters", "engine",
            "observe")


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """One shortest cycle through each set of modules that import each other, as the chain
    of modules (the first again at the end), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    modules = graph.modules
    for root in sorted(modules):  # Tarjan's strongly connected components, iteratively
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            step = next((m for m in imported if m in modules), None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.find_modules_directly_imported_by(
                        step)))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    cycles = []
    for group in groups:
        first = group[0]
        back = [graph.find_shortest_chain(importer=step, imported=first)
                for step in sorted(graph.find_modules_directly_imported_by(first))
                if step in group]
        shortest = min((c for c in back if c), key=len)
        cycles.append([first, *shortest])
    return sorted(cycles)


def describe(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """A cycle as its chain, each link with the line that makes it."""
    links = []
    for importer, imported in zip(cycle, cycle[1:], strict=False):
        details = graph.get_import_details(importer=importer, imported=imported)
        where = (f" (line {details[0]['line_number']}: {details[0]['line_contents']})"
                 if details else "")
        links.append(f"  {importer} -> {imported}{where}")
    return "\n".join(links)


def test_no_hearth_module_imports_itself_back():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert len(graph.modules) > 150, "the graph is missing Hearth's modules"
    cycles = import_cycles(graph)
    assert cycles == [], "import cycles:\n" + "\n\n".join(describe(graph, c) for c in cycles)


def test_a_cycle_is_found_and_named():
    """The check has teeth: a circle through a package's __init__, one between siblings,
    and one through three modules are each found, as their chains."""
    graph = grimp.ImportGraph()
    for importer, imported in [
        ("pkg", "pkg.unit"), ("pkg.unit", "pkg"),                     # __init__ and a child
        ("pkg.a", "pkg.b"), ("pkg.b", "pkg.a"),                       # two siblings
        ("pkg.x", "pkg.y"), ("pkg.y", "pkg.z"), ("pkg.z", "pkg.x"),   # three in a ring
        ("pkg.x", "pkg.unit"), ("pkg.leaf", "pkg.a"),                 # and no more
    ]:
        graph.add_import(importer=importer, imported=imported)
    assert import_cycles(graph) == [
        ["pkg", "pkg.unit", "pkg"],
        ["pkg.a", "pkg.b", "pkg.a"],
        ["pkg.x", "pkg.y", "pkg.z", "pkg.x"],
    ]
    assert describe(graph, ["pkg.a", "pkg.b", "pkg.a"]) == "  pkg.a -> pkg.b\n  pkg.b -> pkg.a"
