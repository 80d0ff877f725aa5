"""The what-if names stay callable whatever was imported: no submodule of the kit is named like a public name of its
package (importing ``cudnn_lab.sm_scaling`` once replaced ``cl.sm_scaling`` on the package, so ``cl.Lab();
cl.sm_scaling(spec)`` failed), and the old ``cudnn_lab.whatif`` names still resolve to the question modules'."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import types

import pytest

import cudnn_lab as cl
from cudnn_lab import whatif

CALLABLES = ("sm_scaling", "plans_for", "targets", "block_format_whatif", "block_scale_plans", "forecast")
#: Modules the walk leaves out: they run as scripts or need a GPU library at import.
SKIP = ("__main__",)


def _packages() -> list[str]:
    """Every package of the kit (cudnn_lab and its sub-packages)."""
    names = ["cudnn_lab"]
    for info in pkgutil.walk_packages(cl.__path__, "cudnn_lab."):
        if info.ispkg:
            names.append(info.name)
    return names


def test_no_submodule_is_named_like_a_lazy_public_name_of_its_package() -> None:
    """A lazily resolved name (a package's ``_LAZY``) is replaced by a submodule of that name once it is imported;
    eagerly bound names (``from .provenance import provenance``) are rebound at import and are left to
    tests/test_package.py."""
    clashes = []
    for name in _packages():
        pkg = importlib.import_module(name)
        subs = {info.name for info in pkgutil.iter_modules(pkg.__path__)}
        clashes += [f"{name}.{s}" for s in sorted(set(getattr(pkg, "_LAZY", {})) & subs)]
    assert not clashes, f"submodules that would replace a public name of their package: {clashes}"


def test_after_importing_every_module_and_making_a_lab_the_public_names_are_still_callable() -> None:
    code = ("import importlib, inspect, json, pkgutil, cudnn_lab as cl\n"
            "for info in pkgutil.walk_packages(cl.__path__, 'cudnn_lab.'):\n"
            f"    if not info.name.endswith({SKIP!r}):\n"
            "        importlib.import_module(info.name)\n"
            "cl.Lab()\n"
            f"print(json.dumps({{n: callable(getattr(cl, n)) and not inspect.ismodule(getattr(cl, n)) "
            f"for n in {CALLABLES!r}}}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == dict.fromkeys(CALLABLES, True)


@pytest.mark.parametrize("name", CALLABLES)
def test_the_cl_names_are_the_question_modules_functions(name: str) -> None:
    value = getattr(cl, name)
    assert inspect.isfunction(value) and value.__module__.startswith("cudnn_lab.whatif.")


@pytest.mark.parametrize("name", sorted(whatif._LAZY))
def test_the_old_whatif_names_resolve_from_the_package(name: str) -> None:
    value = getattr(whatif, name)
    module = importlib.import_module(f"cudnn_lab.whatif.{whatif._LAZY[name]}")
    assert value is getattr(module, name) and not isinstance(value, types.ModuleType)


@pytest.mark.parametrize("old", ["target", "why_not", "sm_scaling", "block_whatif", "version_worker"])
def test_the_loose_what_if_modules_are_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"cudnn_lab.{old}")
