"""benchmarks/gpu.py without a GPU: it refuses with a clear message (status 2, or a
message naming the simulator), and its Markdown report (for BENCHMARKS.md, written when
a GPU session runs it once) states each target and whether it held."""
import os
import subprocess
import sys

from benchmarks import gpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _row(workload, t, gbs=None, tflops=None, jax=None):
    r = {"workload": workload, "functrans": t, "GB/s": gbs, "TFLOP/s": tflops}
    if jax is not None:
        r["jax"] = jax
    return r


def test_markdown_report_checks_each_target():
    rows = [_row("fused elementwise 2^26 f32", 1e-3, gbs=3500.0),
            _row("logsumexp (8192, 8192) f32", 1e-3, gbs=1000.0),
            _row("matmul 4096^2 f32", 1e-2, tflops=12.0),
            _row("MLP step (2048x1024 -> 4096 -> 4096 -> 16) f32", 3e-3, tflops=5.0, jax=1e-3)]
    text = gpu.markdown_report("NVIDIA H200", 4800.0, 60.0, rows)
    lines = text.splitlines()
    assert lines[0] == "## GPU: NVIDIA H200"
    table = {ln.split(" | ")[0][2:]: ln for ln in lines if ln.startswith("| ") and "---" not in ln}
    assert table["fused elementwise 2^26 f32"].endswith("| yes |")      # 3500 >= 0.7 * 4800
    assert "(73%)" in table["fused elementwise 2^26 f32"]
    assert table["matmul 4096^2 f32"].endswith("| no |")               # 12 < 0.3 * 60
    assert table["MLP step (2048x1024 -> 4096 -> 4096 -> 16) f32"].endswith("| no |")  # 3x jax
    assert table["logsumexp (8192, 8192) f32"].endswith("|  |  |")      # no target
    # without jax (or without peaks from the driver) a target is left undecided, not "no"
    text = gpu.markdown_report("GPU", None, None, [_row("matmul 4096^2 f32", 1e-2, tflops=12.0),
                                                   _row("MLP step (x) f32", 3e-3)])
    assert "peaks not reported" in text and "| yes |" not in text and "| no |" not in text


def test_script_refuses_without_a_gpu():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    p = subprocess.run([sys.executable, "-m", "benchmarks.gpu"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and "simulator" in p.stderr
