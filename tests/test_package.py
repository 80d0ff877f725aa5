"""The package: importing it is light, every public name resolves, the lazy names are the real objects."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

import cudnn_lab as cl

HEAVY = ("torch", "cudnn", "plotly", "ipywidgets")


def imported_after(code: str) -> set[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def modules_after_import() -> set[str]:
    return imported_after("import cudnn_lab")


@pytest.mark.parametrize("heavy", HEAVY)
def test_import_does_not_load_heavy_package(modules_after_import: set[str], heavy: str) -> None:
    assert "cudnn_lab" in modules_after_import
    assert heavy not in modules_after_import


def test_building_a_spec_stays_light() -> None:
    loaded = imported_after("import cudnn_lab as cl\ncl.ConvSpec(n=1).to_json()\ncl.spec_from_json("
                            "cl.MatmulSpec().to_json())")
    assert not loaded & set(HEAVY)


def test_results_module_does_not_load_torch_or_cudnn() -> None:
    loaded = imported_after("import cudnn_lab.results")
    assert not loaded & {"torch", "cudnn"}


@pytest.mark.parametrize("name", cl.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(cl, name) is not None


def test_all_has_no_duplicates() -> None:
    assert len(cl.__all__) == len(set(cl.__all__))


def test_dir_lists_public_names() -> None:
    assert set(cl.__all__) <= set(dir(cl))


def test_run_is_a_function() -> None:
    assert inspect.isfunction(cl.run)


def test_build_graph_is_a_function_and_classes_are_classes() -> None:
    assert inspect.isfunction(cl.build_graph)
    for name in ("LabGraph", "RunResult", "ConvSpec", "MatmulSpec", "Spec", "CudnnLabError"):
        assert inspect.isclass(getattr(cl, name)), name


def test_lazy_names_are_the_module_objects() -> None:
    from cudnn_lab.graph import build_graph
    from cudnn_lab.results import RunResult

    assert cl.build_graph is build_graph and cl.RunResult is RunResult


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cl.nope  # noqa: B018


def test_version_is_a_dotted_string() -> None:
    assert all(part.isdigit() for part in cl.__version__.split("."))


def test_provenance_is_the_function_even_after_its_module_is_imported() -> None:
    import cudnn_lab.provenance
    import cudnn_lab.report  # noqa: F401 - imports the module too
    from cudnn_lab.provenance import provenance

    assert cl.provenance is provenance and inspect.isfunction(cl.provenance)
