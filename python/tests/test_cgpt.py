"""The cgpt Python package against cgpt-run: the same libraries, so the same
numbers; models from files, strings and dicts; overrides; IR at each level;
sweeps; targets by name, file and dict; errors and warnings.

Run by test/python/pytest.test with PYTHONPATH=build/python:
    python3 -m pytest python/tests
"""

import json
import os
import subprocess

import pytest

import cgpt

SOURCE = os.environ.get(
    "CGPT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CGPT_RUN = os.environ.get("CGPT_RUN")
TINY = os.path.join(SOURCE, "models", "tiny.yaml")
GPT_1_3B = os.path.join(SOURCE, "models", "cerebras-gpt-1.3b.yaml")
HF_LLAMA = os.path.join(SOURCE, "test", "Frontend", "Inputs", "llama", "llama-2-7b.config.json")
WSE3 = os.path.join(SOURCE, "lib", "Target", "targets", "wse3.yaml")


def run_tool(tmp_path, *args):
    """cgpt-run's JSON report for the same run."""
    if not CGPT_RUN:
        pytest.skip("CGPT_RUN names no cgpt-run")
    report = tmp_path / "report.json"
    subprocess.run([CGPT_RUN, *args, "--report", str(report)], check=True,
                   capture_output=True)
    return json.loads(report.read_text())


def test_simulate_matches_cgpt_run(tmp_path):
    report = cgpt.simulate(GPT_1_3B, target="wse3", num_csx=2)
    assert report["model"]["parameters"] == 1315723264
    assert report["batch"]["num_csx"] == 2
    assert report["target"]["name"] == "wse3"
    tool = run_tool(tmp_path, GPT_1_3B, "--target", "wse3", "--num-csx", "2")
    assert report["step"] == tool["step"]
    assert report["training"] == tool["training"]
    assert report["input"]["path"] == tool["input"]["path"]


def test_model_from_file_string_and_dict_agree():
    from_file = cgpt.Model.from_file(TINY)
    with open(TINY) as f:
        from_string = cgpt.Model.from_string(f.read(), "yaml", name="tiny.yaml")
    from_dict = cgpt.Model.from_dict(from_file.to_dict(), name="tiny.yaml")
    steps = [cgpt.simulate(m)["step"]["seconds"]
             for m in (from_file, from_string, from_dict)]
    assert steps[0] == steps[1] == steps[2]
    assert cgpt.simulate(from_dict)["model"]["name"] == "tiny"


def test_to_dict_reads_yaml_as_model_zoo_does():
    data = cgpt.Model.from_file(TINY).to_dict()
    assert data["model"]["share_embedding_weights"] is True
    assert data["model"]["layer_norm_epsilon"] == 1e-5
    assert data["model"]["position_embedding_type"] == "learned"
    assert data["train_input"]["batch_size"] == 16


def test_hugging_face_dict():
    with open(HF_LLAMA) as f:
        config = json.load(f)
    model = cgpt.Model.from_dict(config, name="llama-2-7b/config.json")
    assert model.format == "json"
    report = cgpt.simulate(model, batch_size=8)
    assert report["model"]["parameters"] == 6738415616
    assert report["model"]["name"] == "llama_2_7b"
    assert report["batch"]["global"] == 8


def test_override_changes_the_model():
    model = cgpt.Model.from_file(TINY)
    wider = model.override({"model.hidden_size": 128, "model.filter_size": 512})
    assert wider.to_dict()["model"]["hidden_size"] == 128
    assert model.to_dict()["model"]["hidden_size"] == 64
    base = cgpt.simulate(model)["model"]["parameters"]
    assert cgpt.simulate(wider)["model"]["parameters"] > base
    with pytest.raises(cgpt.CgptError, match="is not a section"):
        model.override({"model.hidden_size.deeper": 1})


def test_compile_each_level():
    transformer = cgpt.compile(TINY, "transformer")
    assert "transformer.train_step" in transformer
    dataflow = cgpt.compile(TINY, "dataflow")
    assert "dataflow.program" in dataflow
    wafer = cgpt.compile(TINY, "wafer", target="mini")
    assert "wafer.device" in wafer and "wafer.region" in wafer
    with pytest.raises(ValueError, match="allowed"):
        cgpt.compile(TINY, "llvm")


def test_compile_report_rows():
    rows = cgpt.compile_report(TINY, target="mini", placer="pipelined")
    report = cgpt.simulate(TINY, target="mini", placer="pipelined")
    stages = report["placement"]["stages"]
    assert len(rows) == sum(len(s["regions"]) for s in stages)
    assert rows[0]["stage"] == "embed.forward" and rows[0]["mesh_percent"] < 100
    assert all(r["cores"] == r["width"] * r["height"] for r in rows)


def test_summary_is_cgpt_runs():
    text = cgpt.summary(TINY, target="mini")
    assert text.startswith("cgpt: tiny")
    assert "samples/s" in text


def test_sweep_rows():
    rows = cgpt.sweep([TINY, GPT_1_3B], target=["wse2", "wse3"], num_csx="1-2")
    assert len(rows) == 8
    assert [r["model"] for r in rows[:4]] == ["tiny"] * 4
    assert [(r["target"], r["systems"]) for r in rows[:4]] == [
        ("wse2", 1), ("wse2", 2), ("wse3", 1), ("wse3", 2)]
    big = [r for r in rows if r["model"] == "cerebras_gpt_1_3b"]
    assert all(r["train_steps"] == 24322 for r in big)
    assert big[1]["speed_up"] > 1.5
    # Columns are the same in every row: a table without pandas too.
    assert all(list(r) == list(rows[0]) for r in rows)


def test_sweep_over_sequence_and_micro_batch():
    rows = cgpt.sweep(TINY, sequence_length=[32, 64], micro_batch_size=[2, "auto"])
    assert [(r["sequence_length"], r["micro_batch_request"]) for r in rows] == [
        (32, "2"), (32, "auto"), (64, "2"), (64, "auto")]


def test_targets_by_name_file_and_dict():
    assert cgpt.builtin_targets() == ["wse2", "wse3", "mini"]
    by_name = cgpt.simulate(TINY, target="wse3")["step"]
    by_file = cgpt.simulate(TINY, target=WSE3)["step"]
    assert by_name["seconds"] == by_file["seconds"]


def test_target_dict():
    target = cgpt.Model.from_file(WSE3).to_dict()  # a YAML file as a dict
    target["name"] = "wse3-dict"
    report = cgpt.simulate(TINY, target=target)
    assert report["target"]["name"] == "wse3-dict"
    assert report["step"]["seconds"] == cgpt.simulate(
        TINY, target="wse3")["step"]["seconds"]


def test_errors_name_the_file_and_value():
    with pytest.raises(cgpt.CgptError, match=r"model\.yaml:\d+:\d+: .*hidden_size"):
        cgpt.simulate(cgpt.Model.from_dict({"model": {"hidden_size": -1}}))
    with pytest.raises(cgpt.CgptError, match="--num-csx is 5000; allowed 1 to 2048"):
        cgpt.simulate(TINY, num_csx=5000)
    with pytest.raises(cgpt.CgptError, match="a sweep runs at most 128 points"):
        cgpt.sweep(TINY, num_csx="1-16", sequence_length="8-16")
    with pytest.raises(cgpt.CgptError, match="simulate\\(\\) runs one point"):
        cgpt.simulate(TINY, num_csx=[1, 2])
    with pytest.raises(cgpt.CgptError, match="recompute is 'some'"):
        cgpt.simulate(TINY, recompute="some")
    with pytest.raises(TypeError):
        cgpt.simulate(42)


def test_to_dict_refuses_what_the_frontend_refuses():
    deep = cgpt.Model.from_string("a: " + "[" * 300 + "]" * 300, name="deep.yaml")
    with pytest.raises(cgpt.CgptError, match=r"deep\.yaml:1:\d+: error: .*256 levels"):
        deep.to_dict()


def test_warnings_are_python_warnings():
    with pytest.warns(cgpt.CgptWarning, match="does not divide"):
        report = cgpt.simulate(TINY, batch_size=15, num_csx=2)
    assert any("does not divide" in w for w in report["warnings"])


def test_version():
    assert cgpt.version().startswith("cgpt")
