"""The forecast's shipped data goes through the one recordings registry (results/recordings.py): the GPU facts
(``gpu_facts``) and NVIDIA's published tables (``published``, keyed by provenance.json); a damaged copy is refused
with the kit's DataError naming the file, and repeated reads come from the registry's cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cudnn_lab.errors import DataError, PathError
from cudnn_lab.results import recordings
from cudnn_lab.whatif import gpu_facts, published


def test_both_kinds_are_registered_with_their_shipped_folders() -> None:
    assert recordings.kind("gpu_facts").folder == gpu_facts.FACTS_DIR
    assert recordings.kind("published").folder == published.PUBLISHED_DIR
    assert recordings.files("gpu_facts") == [gpu_facts.FACTS_PATH]
    assert recordings.files("published") == [published.PUBLISHED_DIR / published.PROVENANCE]
    assert recordings.files("published_inference") == [published.PUBLISHED_INFERENCE_DIR / published.PROVENANCE]


def test_shipped_data_reads_through_the_registry_and_its_cache() -> None:
    facts = gpu_facts.load_gpu_facts()
    assert "h200" in facts and facts["h200"].sm_count
    assert gpu_facts.load_gpu_facts() is facts  # the registry's cache, not a second read
    [via_registry] = recordings.read("gpu_facts")
    assert via_registry.facts is facts
    rows = published.load_published(published.PUBLISHED_DIR)
    [again] = recordings.read("published")
    assert rows == again and {r.gpu for r in rows} >= {"h200", "a100_80gb_pcie"}
    [inference] = recordings.read("published_inference")
    assert published.load_published() == rows + inference  # the default: both shipped folders
    assert gpu_facts.synthetic_arch()  # the map comes from the same checked file


def _copy_published(tmp_path: Path) -> Path:
    dest = tmp_path / "pub"
    shutil.copytree(published.PUBLISHED_DIR, dest)
    return dest


def test_a_truncated_provenance_is_refused_naming_it(tmp_path) -> None:
    folder = _copy_published(tmp_path)
    prov = folder / published.PROVENANCE
    prov.write_text(prov.read_text()[:200])
    with pytest.raises(DataError, match="provenance.json"):
        published.load_published(folder)


def test_a_provenance_of_another_format_is_refused(tmp_path) -> None:
    folder = _copy_published(tmp_path)
    prov = folder / published.PROVENANCE
    data = json.loads(prov.read_text())
    data["format"] = "something else"
    prov.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"provenance.json.*format"):
        published.load_published(folder)


def test_a_damaged_csv_is_refused_naming_file_row_and_field(tmp_path) -> None:
    folder = _copy_published(tmp_path)
    csv_path = next(folder.glob("h200_*.csv"))
    lines = csv_path.read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",10.0"  # a peak far from the H200's
    csv_path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"{csv_path.name}.*row 2.*peak_mma_tflops"):
        published.load_published(folder)


def test_a_missing_or_oversized_csv_is_refused_before_it_is_read(tmp_path, monkeypatch) -> None:
    folder = _copy_published(tmp_path)
    victim = next(folder.glob("a100_*.csv"))
    victim.unlink()
    with pytest.raises(PathError, match=victim.name):
        published.load_published(folder)
    folder2 = _copy_published(tmp_path / "two")
    big = max(folder2.glob("*.csv"), key=lambda p: p.stat().st_size)
    monkeypatch.setattr(published, "MAX_CSV_BYTES", big.stat().st_size - 1)
    with pytest.raises(DataError, match=rf"{big.name}.*more than"):
        published.load_published(folder2)


def test_a_damaged_facts_file_is_refused_naming_it(tmp_path) -> None:
    data = json.loads(gpu_facts.FACTS_PATH.read_text())
    data["gpus"]["h200"]["sm_count"] = "many"
    path = tmp_path / "my_gpus.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"my_gpus.json.*gpus.h200.sm_count"):
        gpu_facts.load_gpu_facts(path)
    path.write_text(gpu_facts.FACTS_PATH.read_text()[:100])
    with pytest.raises(DataError, match="my_gpus.json"):
        gpu_facts.load_gpu_facts(path)


# NVIDIA's inference CSVs (another schema, no peak column): H200 -> B200 and H200 -> B300 pairs of DeepSeek-V4 MLA
# attention, each target file with its own H200 file (h200_counterpart).

def _copy_inference(tmp_path: Path) -> Path:
    dest = tmp_path / "inf"
    shutil.copytree(published.PUBLISHED_INFERENCE_DIR, dest)
    return dest


def test_inference_rows_pair_h200_with_b200_and_take_the_datasheet_peak() -> None:
    rows = [r for r in published.load_published() if r.phase != "training"]
    facts = gpu_facts.load_gpu_facts()
    for target in ("b200", "b300"):
        mine = [r for r in rows if r.gpu == target]
        [counterpart] = {r.counterpart for r in mine}
        source = {r.problem for r in rows if r.gpu == "h200" and r.file == counterpart}
        assert mine and {r.problem for r in mine} == source, target  # every target row has its own H200 row
    assert {r.phase for r in rows} == {"context", "generation"}
    for r in rows:
        assert r.peak_mma_tflops == facts[r.gpu].peak_tflops("bfloat16")
        assert r.attn_mask == "bottom_right" and r.seq_q <= r.seq_kv
    assert all(r.phase == "training" for r in published.load_published(published.PUBLISHED_DIR))


@pytest.mark.parametrize("target", ["b200", "b300"])
def test_blackwell_inference_lines_are_answered_within_the_target(target: str) -> None:
    from cudnn_lab.whatif import speed_validation as sv

    [line] = [r for r in sv.validate() if r.dataset == "published" and r.target == target]
    pairs = sv._published_pairs(published.load_published(), "h200", target)
    assert line.n == len(pairs) == len([r for r in published.load_published() if r.gpu == target]) > 0
    # Hopper's head-dim-512 engine is not Blackwell's (0.4x the peak ratio in context, 2x in generation): the peak
    # ratio is a baseline and does not vote; every transfer is slower than the datasheet bound, so each is answered
    assert line.measure_this_share == 0.0 and line.answered_mape == line.mape["transfer"]
    assert line.mape["transfer"] <= sv.TARGETS[("published", target, "every")] < line.mape["peak_ratio"]
    assert f"published|sdpa|h200|{target}|every" in sv.baseline_errors()


def test_an_inference_row_whose_tflops_disagrees_is_refused(tmp_path) -> None:
    folder = _copy_inference(tmp_path)
    path = next(folder.glob("b200_*.csv"))
    lines = path.read_text().splitlines()
    fields = lines[2].split(",")
    fields[16] = str(float(fields[16]) * 2)  # time_ms doubled, NVIDIA's tflops column kept
    lines[2] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"{path.name}.*row 3.*tflops"):
        published.load_published(folder)


def test_an_fp8_kv_cache_row_is_refused_naming_the_field(tmp_path) -> None:
    folder = _copy_inference(tmp_path)
    path = next(folder.glob("h200_*.csv"))
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace("bfloat16,bfloat16", "bfloat16,fp8_e4m3", 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"{path.name}.*row 2.*kv_cache_dtype"):
        published.load_published(folder)


def test_a_target_file_without_its_h200_counterpart_is_refused(tmp_path) -> None:
    folder = _copy_inference(tmp_path)
    prov = folder / published.PROVENANCE
    data = json.loads(prov.read_text())
    for rec in data["files"]:
        if rec["gpu"] != "h200":
            rec["h200_counterpart"] = "no_such.csv"
    prov.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"provenance.json.*h200_counterpart"):
        published.load_published(folder)
