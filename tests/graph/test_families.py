"""Every op family is found through the graph layer's registries by its spec class: a recipe, script reference
code and a drawing for each; a spec class without them gets a SpecError naming what it lacks."""

from __future__ import annotations


import pytest

from cudnn_lab.errors import SpecError
from cudnn_lab.graph import DRAWINGS, RECIPES, REFERENCE_CODE, SafeDigraph, build_graph, drawing, recipe_for
from cudnn_lab.graph.families import reference_code
from cudnn_lab.graph.pool import PoolingHasNoGraphError
from cudnn_lab.graph.recipe import Recipe
from cudnn_lab.graph.classic_call import ClassicOnlyError
from cudnn_lab.specs import (ActivationSpec, ConvSpec, PoolSpec, RnnSpec, SoftmaxSpec, Spec, TransformSpec,
                             spec_classes)

FAMILIES = list(spec_classes().values())
#: Families the graph API does not hold (their default spec): cuDNN's classic calls run them.
CLASSIC = (PoolSpec, SoftmaxSpec, ActivationSpec, TransformSpec, RnnSpec)


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_every_spec_family_is_registered_in_each_graph_registry(cls: type[Spec]) -> None:
    for registry in (RECIPES, REFERENCE_CODE, DRAWINGS):
        assert cls in registry, (registry.what, cls.__name__)
    spec = cls()
    assert isinstance(drawing(spec), SafeDigraph)
    lines = reference_code(spec)
    assert lines[-1] == "return y" and all(isinstance(x, str) for x in lines)


@pytest.mark.parametrize("cls", [c for c in FAMILIES if c not in CLASSIC], ids=lambda c: c.__name__)
def test_graph_families_build_their_registered_recipe(cls: type[Spec]) -> None:
    spec = cls()
    recipe = recipe_for(spec)
    assert isinstance(recipe, Recipe) and recipe == RECIPES[cls](spec)
    assert build_graph(spec).recipe == recipe


def test_pooling_registers_a_recipe_that_says_why_there_is_none() -> None:
    with pytest.raises(PoolingHasNoGraphError):
        recipe_for(PoolSpec())
    assert "cudnnPoolingForward" in drawing(PoolSpec()).source


@pytest.mark.parametrize("cls", CLASSIC[1:], ids=lambda c: c.__name__)
def test_classic_families_register_a_recipe_that_says_why_there_is_none(cls: type[Spec]) -> None:
    with pytest.raises(ClassicOnlyError) as info:
        recipe_for(cls())
    assert "classic" in str(info.value) and "classic" in drawing(cls()).source


@pytest.mark.parametrize("call,what", [(recipe_for, "cuDNN graph recipe"), (reference_code, "script reference code"),
                                       (drawing, "drawing"), (build_graph, "cuDNN graph recipe")])
def test_an_unregistered_family_is_named_with_the_missing_layer(call, what: str, unregistered_spec: Spec) -> None:
    with pytest.raises(SpecError) as info:
        call(unregistered_spec)
    assert info.value.field == "spec" and info.value.value == "NewSpec" and what in str(info.value)
    assert "ConvSpec" in str(info.value)  # the families that have one are listed


@pytest.mark.parametrize("bad", [None, "conv", {"op": "conv"}, ConvSpec])
def test_non_specs_are_refused(bad) -> None:
    for call in (recipe_for, drawing, build_graph):
        with pytest.raises(SpecError):
            call(bad)


def test_a_family_registers_once() -> None:
    with pytest.raises(ValueError, match="already has"):
        RECIPES.add(ConvSpec, lambda spec: None)
