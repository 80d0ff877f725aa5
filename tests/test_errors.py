"""The error family: one base class, each error also the builtin a Python user expects, messages that help."""

from __future__ import annotations

import pytest

from cudnn_lab import errors
from cudnn_lab.errors import (CudnnLabError, DataError, DrawingError, MissingDependencyError, NoGPUError,
                              OptionError, PathError, PlanError, ResourceError, SpecError, UnsupportedGraphError,
                              WorkerError, shorten)

BUILTINS = [(SpecError, ValueError), (OptionError, ValueError), (DataError, ValueError), (PathError, OSError),
            (NoGPUError, RuntimeError), (UnsupportedGraphError, RuntimeError), (ResourceError, MemoryError),
            (MissingDependencyError, ImportError), (PlanError, RuntimeError), (DrawingError, RuntimeError),
            (WorkerError, RuntimeError)]


@pytest.mark.parametrize("cls,builtin", BUILTINS, ids=[c.__name__ for c, _ in BUILTINS])
def test_error_subclasses_lab_error_and_its_builtin(cls, builtin) -> None:
    assert issubclass(cls, CudnnLabError) and issubclass(cls, builtin)


def test_lab_error_is_an_exception() -> None:
    assert issubclass(CudnnLabError, Exception)


def test_all_lists_every_error() -> None:
    assert set(errors.__all__) == {"CudnnLabError", "shorten", *(c.__name__ for c, _ in BUILTINS)}


def test_spec_error_caught_by_value_error_clause() -> None:
    with pytest.raises(ValueError, match="x=3: too big"):
        raise SpecError("x", 3, "too big")


def test_spec_error_prefixes_the_spec_name() -> None:
    assert str(SpecError("n", 0, "must be positive", spec="ConvSpec")) == "ConvSpec.n=0: must be positive"


def test_spec_error_keeps_its_parts() -> None:
    err = SpecError("layout", "X", "must be NCHW or NHWC", spec="ConvSpec")
    assert (err.field, err.value, err.allowed, err.spec) == ("layout", "X", "must be NCHW or NHWC", "ConvSpec")


def test_no_gpu_error_says_what_still_works_and_what_to_do() -> None:
    text = str(NoGPUError())
    assert text.startswith("Cannot run on a GPU: no CUDA GPU is visible to PyTorch")
    assert "work without one" in text
    assert "recorded_datasets()" in text and "load_results()" in text
    assert "NVIDIA GPU" in text


def test_no_gpu_error_includes_given_reason() -> None:
    err = NoGPUError("the NVIDIA driver is not loaded")
    assert "the NVIDIA driver is not loaded" in str(err) and err.reason == "the NVIDIA driver is not loaded"


@pytest.mark.parametrize("needed,free,shown", [(3 * 2 ** 30, 2 ** 30, ("3.00 GiB", "1.00 GiB")),
                                               (int(1.5 * 2 ** 30), 2 ** 29, ("1.50 GiB", "0.50 GiB")),
                                               (80 * 2 ** 30, 79 * 2 ** 30 + 2 ** 29, ("80.00 GiB", "79.50 GiB"))])
def test_resource_error_mentions_gib_figures_from_its_args(needed: int, free: int, shown: tuple[str, str]) -> None:
    err = ResourceError(needed, free)
    text = str(err)
    assert f"needs about {shown[0]}" in text and f"only {shown[1]} is free" in text
    assert (err.needed_bytes, err.free_bytes) == (needed, free)
    assert "smaller" in text  # says what to do


def test_resource_error_names_what_does_not_fit() -> None:
    assert str(ResourceError(2 ** 31, 2 ** 30, what="conv fprop n256")).startswith("conv fprop n256 needs")


def test_resource_error_caught_by_memory_error_clause() -> None:
    with pytest.raises(MemoryError):
        raise ResourceError(2, 1)


def test_missing_dependency_error_names_what_and_how_to_install() -> None:
    err = MissingDependencyError("The graphviz 'dot' program", "Install it with 'apt-get install graphviz'.")
    assert str(err) == "The graphviz 'dot' program is not available. Install it with 'apt-get install graphviz'."
    assert (err.what, err.install_hint) == ("The graphviz 'dot' program", "Install it with 'apt-get install graphviz'.")


def test_missing_dependency_error_caught_by_import_error_clause() -> None:
    with pytest.raises(ImportError):
        raise MissingDependencyError("plotly", "pip install plotly")


def test_every_lab_error_caught_by_one_clause() -> None:
    made = [SpecError("f", 1, "x"), OptionError("o", 1, "x"), DataError("p", "x"), PathError("p", "x"), NoGPUError(),
            UnsupportedGraphError("s"), PlanError("p"), ResourceError(2, 1), MissingDependencyError("w", "h")]
    for err in made:
        with pytest.raises(CudnnLabError):
            raise err


def test_option_error_names_the_option_and_where() -> None:
    err = OptionError("time_cap_s", -1, "must be > 0", where="sweep")
    assert str(err) == "sweep: option time_cap_s=-1: must be > 0"
    assert (err.option, err.value, err.allowed, err.where) == ("time_cap_s", -1, "must be > 0", "sweep")


def test_path_and_data_errors_name_the_file_and_the_problem() -> None:
    said = str(PathError("/x/r.json", "is a directory", hint="give a file"))
    assert said == "'/x/r.json': is a directory. give a file"
    err = DataError("r.json", "field plans: must be a list")
    assert "r.json" in str(err) and "field plans" in str(err) and err.path == "r.json"


@pytest.mark.parametrize("value", ["x" * 1_000_000, 10**4999, list(range(100_000))], ids=["text", "int", "list"])
def test_long_values_are_shortened_in_messages(value) -> None:
    assert len(shorten(value)) <= 80
    assert len(str(OptionError("o", value, "bad"))) < 200


def test_a_drawing_error_is_one_sentence_naming_the_spec():
    from cudnn_lab import RnnSpec

    e = DrawingError("digraph {", "syntax error", RnnSpec(direction="bwd"))
    assert isinstance(e, CudnnLabError) and isinstance(e, RuntimeError)
    assert "RnnSpec" in str(e) and "\n" not in str(e) and e.stderr == "syntax error"
