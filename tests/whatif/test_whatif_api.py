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


#: Zero-argument public functions that measure on the GPU (checked callable, not called: a call would measure).
MEASURES = ("measure_ceilings",)


def test_after_importing_every_module_every_public_name_of_cl_is_still_usable() -> None:
    """Issue 37 (Deliver 2): after every submodule is imported and a Lab made, every name of ``cl.__all__`` is no
    module; a public function with no required argument is called (it answers or raises the kit's own error, never
    TypeError "'module' object is not callable"); every other function or class is still callable."""
    code = ("import importlib, inspect, json, pkgutil, cudnn_lab as cl\n"
            "from cudnn_lab.errors import CudnnLabError\n"
            "for info in pkgutil.walk_packages(cl.__path__, 'cudnn_lab.'):\n"
            f"    if not info.name.endswith({SKIP!r}):\n"
            "        importlib.import_module(info.name)\n"
            "cl.Lab()\n"
            "bad, called = {}, []\n"
            "for n in cl.__all__:\n"
            "    v = getattr(cl, n)\n"
            "    if inspect.ismodule(v):\n"
            "        bad[n] = 'a module'\n"
            "        continue\n"
            "    if n.isupper() or n.startswith('__'):\n"
            "        continue\n"
            "    if not callable(v):\n"
            "        bad[n] = type(v).__name__\n"
            "        continue\n"
            "    if not inspect.isfunction(v):\n"
            "        continue\n"
            "    ps = inspect.signature(v).parameters.values()\n"
            "    if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in ps):\n"
            "        continue\n"
            f"    if n in {MEASURES!r}:\n"
            "        continue\n"
            "    try:\n"
            "        v()\n"
            "    except CudnnLabError:\n"
            "        pass\n"
            "    except Exception as e:\n"
            "        bad[n] = f'{type(e).__name__}: {e}'[:200]\n"
            "    called.append(n)\n"
            "print(json.dumps({'bad': bad, 'called': called}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    assert answer["bad"] == {}
    assert {"targets", "presets", "recorded_datasets"} <= set(answer["called"])  # the walk reached the functions
