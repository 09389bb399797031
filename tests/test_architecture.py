"""The import rules of docs/architecture.md, checked against the code.

Every .py file under engine/, models/, training/ and scripts/ is parsed with `ast`, and
every import it makes is collected, including imports inside functions (the command line
imports torch lazily, so the lazy imports are the ones that matter). The rules:

- engine/ imports nothing of models/, training/ or scripts/, and never torch (nor the
  other heavy libraries: tensorboard, ray, fastapi, uvicorn);
- models/ imports engine/ only (of the project's packages);
- training/ imports engine/ and models/ only;
- only scripts/ parses arguments: no argparse outside scripts/;
- inside engine/, the flat rules core imports none of engine.cube, engine.formats,
  engine.gnubg, engine.pit; each of those imports only the core and the subpackages in
  SUBPACKAGE_ALLOWED;
- inside scripts/, the subcommands (scripts.commands) do not import the experiment tools
  (scripts.lab), except the pairs listed in KNOWN_EXCEPTIONS.

A known exception is a rule the code breaks today, listed so the suite stays green while
it is fixed; `test_known_exceptions_still_needed` fails once the code no longer needs one,
so the list can only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "models", "training", "scripts")
ENGINE_SUBPACKAGES = ("analysis", "cube", "formats", "gnubg", "pit", "rollout")
HEAVY = ("torch", "tensorboard", "ray", "fastapi", "uvicorn", "starlette")

# What each engine subpackage may import besides the flat core (and itself).
SUBPACKAGE_ALLOWED = {
    "engine.analysis": {"engine.cube", "engine.formats"},  # grades cube actions of replayed .mat files
    "engine.cube": {"engine.pit"},                      # cube.play seats cube games in the pit
    "engine.formats": set(),
    "engine.gnubg": {"engine.cube", "engine.formats"},  # the external bot reads FIBS boards, decides cubes
    "engine.pit": {"engine.formats"},                   # pit games are written as .mat files
    "engine.rollout": {"engine.cube"},                  # cubeful rollouts decide cubes
}

# (importing module, imported module) pairs that break a rule today. Keep this short.
KNOWN_EXCEPTIONS = {
    # `tdgammon eval`'s cube options live among the lab tools; they belong in scripts.commands.
    ("scripts.commands.eval", "scripts.commands.cube_options"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every module name the file imports, anywhere in it: `import a.b` gives a.b;
    `from a import b` gives a and a.b (b may be a module); relative imports resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def top(name: str) -> str:
    return name.split(".")[0]


def engine_part(name: str) -> str:
    """'engine.core' for the flat rules core, else 'engine.cube', 'engine.formats', ..."""
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in ENGINE_SUBPACKAGES:
        return f"engine.{parts[1]}"
    return "engine.core"


def project_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


IMPORTS = {module_name(p): imports_of(p) for p in project_files()}


def violations(rule) -> list[tuple[str, str]]:
    """(module, import) pairs for which rule(module, import) is true, minus known exceptions."""
    found = []
    for module, names in sorted(IMPORTS.items()):
        for name in sorted(names):
            if rule(module, name) and not excepted(module, name):
                found.append((module, name))
    return found


def excepted(module: str, name: str) -> bool:
    return any(module == m and (name == n or name.startswith(n + "."))
               for m, n in KNOWN_EXCEPTIONS)


def test_every_package_is_parsed():
    for pkg in PACKAGES:
        assert any(m == pkg or m.startswith(pkg + ".") for m in IMPORTS), pkg
    assert len(IMPORTS) > 50


def test_engine_imports_no_upper_layer_and_no_torch():
    bad = violations(lambda m, n: top(m) == "engine"
                     and top(n) in ("models", "training", "scripts") + HEAVY)
    assert bad == [], "engine/ must not import these: " + repr(bad)


def test_models_import_engine_only():
    bad = violations(lambda m, n: top(m) == "models" and top(n) in ("training", "scripts"))
    assert bad == [], "models/ may import only engine/: " + repr(bad)


def test_training_imports_engine_and_models_only():
    bad = violations(lambda m, n: top(m) == "training" and top(n) == "scripts")
    assert bad == [], "training/ may import only engine/ and models/: " + repr(bad)


def test_only_scripts_parse_arguments():
    bad = violations(lambda m, n: top(m) != "scripts" and top(n) == "argparse")
    assert bad == [], "argparse outside scripts/: " + repr(bad)


def test_engine_core_imports_no_engine_subpackage():
    bad = violations(lambda m, n: top(m) == "engine" and engine_part(m) == "engine.core"
                     and top(n) == "engine" and engine_part(n) != "engine.core")
    assert bad == [], "the flat rules core must not import engine's subpackages: " + repr(bad)


@pytest.mark.parametrize("sub", sorted(SUBPACKAGE_ALLOWED))
def test_engine_subpackage_imports(sub):
    allowed = SUBPACKAGE_ALLOWED[sub] | {sub, "engine.core"}
    bad = violations(lambda m, n: top(m) == "engine" and engine_part(m) == sub
                     and top(n) == "engine" and engine_part(n) not in allowed)
    assert bad == [], f"{sub} may import only {sorted(allowed)}: " + repr(bad)


def test_engine_subpackages_form_no_cycle():
    edges = SUBPACKAGE_ALLOWED

    def reaches(start: str, goal: str, seen: frozenset = frozenset()) -> bool:
        return any(nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt}))
                   for nxt in edges.get(start, ()))
    assert not any(reaches(sub, sub) for sub in edges)


def test_commands_do_not_import_lab_tools():
    bad = violations(lambda m, n: m.startswith("scripts.commands")
                     and n.startswith("scripts.lab"))
    assert bad == [], "a subcommand imports an experiment tool: " + repr(bad)


def test_known_exceptions_still_needed():
    stale = [(m, n) for m, n in KNOWN_EXCEPTIONS if n not in IMPORTS.get(m, set())]
    assert stale == [], "fixed in the code; remove from KNOWN_EXCEPTIONS: " + repr(stale)
