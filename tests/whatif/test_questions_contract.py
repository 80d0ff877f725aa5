"""The what-if question contract, complete for every registered question (``cudnn_lab.whatif.QUESTIONS``): its
module exists and holds ``ask``, each answer type is a frozen dataclass with to_dict/from_dict/summary/frame, its
recordings kind is registered in results/recordings.py and loads, a recorded answer round-trips through
to_dict/from_dict, its views are in plots/registry.py, and no submodule shadows a public name. README's "Adding a
what-if question" lists exactly these steps; a question that misses one fails here, naming it. The answer types no
recording holds (Drift, BlockWhatIf) round-trip here on answers made from the recordings or on the CPU."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import cudnn_lab
import cudnn_lab.whatif as whatif
from cudnn_lab.plots.registry import SOURCES, entries, entry
from cudnn_lab.results import recordings
from cudnn_lab.whatif import QUESTIONS, Question

REGISTERED = list(QUESTIONS.values())


def _same(a: Any, b: Any) -> bool:
    """Two answers hold the same data: their dicts equal as JSON (NaN included)."""
    return json.dumps(a.to_dict(), sort_keys=True, default=str) == json.dumps(b.to_dict(), sort_keys=True,
                                                                              default=str)


def test_the_registry_is_typed_and_every_name_its_own() -> None:
    assert REGISTERED and all(isinstance(q, Question) and q.name == name for name, q in QUESTIONS.items())
    assert len({q.module for q in REGISTERED}) == len(REGISTERED)
    assert len({q.recording for q in REGISTERED}) == len(REGISTERED)


@pytest.mark.parametrize("q", REGISTERED, ids=lambda q: q.name)
def test_step1_the_module_exists_and_asks(q: Question) -> None:
    module = q.load()
    assert module.__name__ == f"cudnn_lab.whatif.{q.module}"
    assert callable(getattr(module, "ask", None)), f"{q.module} has no ask(...)"
    assert module.ask.__doc__, f"{q.module}.ask has no docstring"


@pytest.mark.parametrize("q", REGISTERED, ids=lambda q: q.name)
def test_step2_each_answer_type_is_a_frozen_record_with_the_four_methods(q: Question) -> None:
    module = q.load()
    assert q.answers, f"{q.name} registers no answer type"
    for name in q.answers:
        cls = getattr(module, name, None)
        assert isinstance(cls, type) and dataclasses.is_dataclass(cls), f"{q.module}.{name} is no dataclass"
        assert cls.__dataclass_params__.frozen, f"{q.module}.{name} is not frozen"  # type: ignore[attr-defined]
        for method in ("to_dict", "summary", "frame"):
            assert callable(getattr(cls, method, None)), f"{q.module}.{name} has no {method}()"
        assert isinstance(cls.__dict__.get("from_dict"), classmethod), f"{q.module}.{name}.from_dict is no classmethod"
    tree = ast.parse(Path(module.__file__ or "").read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not imported & {"subprocess", "multiprocessing"}, f"{q.module} starts processes outside gpu/workers"
    assert not any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body), q.module


@pytest.mark.parametrize("q", REGISTERED, ids=lambda q: q.name)
def test_step3_the_recordings_kind_is_registered_and_loads(q: Question) -> None:
    q.load()  # the module registers its kind
    kind = recordings.kind(q.recording)
    assert kind.name == q.recording and kind.folder.is_dir()
    assert recordings.read(q.recording), f"no recording of kind {q.recording} loads"


@pytest.mark.parametrize("q", REGISTERED, ids=lambda q: q.name)
def test_step4_a_recorded_answer_round_trips(q: Question) -> None:
    module = q.load()
    answers = list(getattr(module, q.recorded)())
    first = getattr(module, q.answers[0])
    assert answers and all(isinstance(a, first) for a in answers), f"{q.module}.{q.recorded}() lists no {first}"
    for a in answers[:50]:
        back = first.from_dict(json.loads(json.dumps(a.to_dict())))
        assert isinstance(back, first) and _same(back, a)
        assert back.summary() == a.summary()
        assert back.frame().equals(a.frame())


@pytest.mark.parametrize("q", REGISTERED, ids=lambda q: q.name)
def test_step5_its_views_are_in_the_plots_registry(q: Question) -> None:
    names = {e.name for e in entries()}
    assert set(q.views) <= names, f"{q.name}: no plots/registry entry {sorted(set(q.views) - names)}"
    for name in q.views:  # each draws one of the question's answer types
        assert any(a in SOURCES[entry(name).source] for a in q.answers), f"{name} draws no answer of {q.name}"


@pytest.mark.parametrize("q", REGISTERED, ids=lambda q: q.name)
def test_step6_its_answer_types_are_public_names_of_the_package(q: Question) -> None:
    for name in q.answers:
        assert whatif._LAZY.get(name) == q.module, f"whatif._LAZY lacks {name} -> {q.module}"
        assert getattr(whatif, name) is getattr(q.load(), name)


def test_step6_no_submodule_shadows_a_public_name() -> None:
    subs = {m.name for m in pkgutil.iter_modules(whatif.__path__)}
    assert {q.module for q in REGISTERED} <= subs
    public = {*whatif.__all__, *cudnn_lab.__all__, "ask"}
    assert not subs & public, f"a submodule named like a public name replaces it on import: {sorted(subs & public)}"
    for q in REGISTERED:  # every question's module imported: the public names still resolve to functions
        q.load()
    assert callable(whatif.plans_for) and callable(cudnn_lab.sm_scaling) and callable(cudnn_lab.targets)


def test_the_answer_types_no_recording_holds_round_trip_too() -> None:
    from cudnn_lab.whatif.block_formats import BlockWhatIf, block_format_whatif
    from cudnn_lab.whatif.heuristics import Drift, recorded_whatifs

    ws = recorded_whatifs()
    pair = next((a, b) for a in ws for b in ws if a.spec == b.spec and a.target == b.target
                and a.cudnn_version < b.cudnn_version)
    drift = Drift(*pair)
    back = Drift.from_dict(json.loads(json.dumps(drift.to_dict())))
    assert back == drift and back.summary() == drift.summary() and back.frame().equals(drift.frame())
    emulated = block_format_whatif(cudnn_lab.MatmulSpec(batch=1, m=64, n=64, k=128, dtype="bf16"), "nvfp4",
                                   outliers=0.05)
    again = BlockWhatIf.from_dict(json.loads(json.dumps(emulated.to_dict())))
    assert _same(again, emulated) and again.summary() == emulated.summary()
    assert again.frame().equals(emulated.frame())


def test_every_answer_type_refuses_what_is_not_its_dict() -> None:
    for q in REGISTERED:
        module = importlib.import_module(f"cudnn_lab.whatif.{q.module}")
        for name in q.answers:
            with pytest.raises(cudnn_lab.errors.DataError):
                getattr(module, name).from_dict(["not", "an", "answer"])


def test_every_block_scale_family_registers_its_cpu_product_and_whatif_names_no_family() -> None:
    from cudnn_lab.reference.families import BLOCK_PRODUCTS, BlockProduct
    from cudnn_lab.specs import spec_classes

    with_axis = {cls for cls in spec_classes().values() if cls.block_scale_axis is not None}
    assert with_axis and with_axis == set(BLOCK_PRODUCTS), "register a BlockProduct in the family's reference module"
    for cls in with_axis:
        product = BLOCK_PRODUCTS[cls](cls())
        assert isinstance(product, BlockProduct) and {product.first, product.second} == set(product.axes)
        assert product.size_field in {f.name for f in dataclasses.fields(cls)} and product.fan_in > 0
    folder = Path(whatif.__file__).parent
    families = {cls.__name__ for cls in spec_classes().values()}
    for path in sorted(folder.glob("*.py")):  # no family branch: no isinstance(x, <Family>Spec), no axis compare
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance" and len(node.args) == 2:
                named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                assert not named & families, f"{path.name}:{node.lineno} branches on a family"
            if isinstance(node, ast.Compare) and "block_scale_axis" in ast.unparse(node.left):
                assert all(isinstance(c, ast.Constant) and c.value is None for c in node.comparators), \
                    f"{path.name}:{node.lineno} branches on a family's block-scale axis"
