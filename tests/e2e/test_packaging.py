"""Installing mnemolog puts only the namespaced package on the path."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return next(out.glob("mnemolog-*.whl"))


def test_the_wheel_installs_only_the_mnemolog_package(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "dist")
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert top_level == {"mnemolog", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}
    assert "mnemolog/prompts/stage_one_system.md" in names
    assert "mnemolog/domain/services/consolidate.py" in names  # subpackages are listed in pyproject too
    assert {"mnemolog/cli/web/app.py", "mnemolog/cli/web/templates/base.html", "mnemolog/cli/web/static/style.css"} <= set(names)  # serve's pages
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "mnemolog = mnemolog.cli.app:main" in zipfile.ZipFile(wheel).read(entry_points).decode()

    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)], check=True)
    env = {**os.environ, "PYTHONPATH": str(target)}
    help_run = subprocess.run(
        [sys.executable, "-c", "import sys; from mnemolog.cli.app import main; sys.argv = ['mnemolog', '--help']; main()"],
        env=env, cwd=tmp_path, capture_output=True, text=True,
    )
    assert help_run.returncode == 0, help_run.stderr
    assert "Usage: mnemolog" in help_run.stdout
    bare = subprocess.run([sys.executable, "-c", "import domain"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert bare.returncode != 0 and "No module named 'domain'" in bare.stderr
