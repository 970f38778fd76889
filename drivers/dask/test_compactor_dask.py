"""The Dask driver must give what one unsharded run gives, byte for byte.

Each case runs a compactor command once as is, and once through the driver on a
real local cluster of two worker processes, then compares the exit codes, what
was printed on stdout and every file of the two output folders.

    python3 -m unittest drivers/dask/test_compactor_dask.py

COMPACTOR_BIN names the binary (default: target/release/compactor, else
target/debug/compactor, else compactor on PATH) and COMPACTOR_CORPUS the logs
(default: ../shared/corpus from the repository). Without dask, the binary or
the corpus the cluster cases are skipped, except under CI=true, where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DRIVER = HERE / "compactor_dask.py"
IN_CI = os.environ.get("CI") == "true"
SHARDS = 3
GRID = """\
[base]
context_window = 32000

[grid]
"compact.trigger_ratio" = [0.6, 0.8]
"compact.keep_recent_ratio" = [0.125, 0.25]
"""

sys.path.insert(0, str(HERE))
import compactor_command  # noqa: E402


def require(ok: bool, reason: str) -> None:
    """Skip when something the test needs is missing; under CI, fail instead."""
    if not ok:
        if IN_CI:
            raise AssertionError(f"{reason} (CI=true: the driver test must run)")
        raise unittest.SkipTest(reason)


def find_binary() -> str | None:
    if env := os.environ.get("COMPACTOR_BIN"):
        return str((REPO / env).resolve()) if os.sep in env else shutil.which(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    for profile in ("release", "debug"):
        if (target / profile / "compactor").is_file():
            return str((target / profile / "compactor").resolve())
    return shutil.which("compactor")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root by its relative path, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


class ParseCommand(unittest.TestCase):
    """How the user's command is split, given which flags take a value."""

    HELP = """Options:
      --format <FORMAT>           Force a log format
  -q, --quiet                     No progress bar
      --summarizer-command <CMD>  Your own summarizer program. Sets
                                  --summarizer command
      --summarizer <NAME>         Summarizer for every policy
      --out <DIR>
          Write the reports here
  -v, --verbose                   Every row
"""

    def test_reads_flags_from_help_not_from_wrapped_text(self) -> None:
        fake = Path(tempfile.mkdtemp()) / "compactor"
        self.addCleanup(shutil.rmtree, fake.parent)
        fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{self.HELP}EOF\n")
        fake.chmod(0o755)
        self.assertEqual(compactor_command.help_flags(str(fake), "replay"), {
            "--format": True, "-q": False, "--quiet": False, "--summarizer-command": True,
            "--summarizer": True, "--out": True, "-v": False, "--verbose": False})

    FLAGS = {"--baseline": True, "--out": True, "--json": False, "-q": False,
             "--quiet": False, "--summary": True, "--preset": True, "-v": False}

    def test_routes_outputs_to_merge_and_keeps_the_rest(self) -> None:
        cmd = compactor_command.parse_command(
            ["check", "logs", "--baseline", "b.json", "-q", "--summary=s.md",
             "--json", "-v", "more", "--out", "report"], self.FLAGS)
        self.assertEqual(cmd.inputs, ["logs", "more"])
        self.assertEqual(cmd.args, ["logs", "--baseline", "b.json", "more"])
        self.assertEqual(cmd.merge_args, ["--quiet", "--summary=s.md", "--json", "-v"])
        self.assertEqual(cmd.out, "report")
        self.assertTrue(cmd.quiet)

    def test_shard_flags_follow_the_subcommand(self) -> None:
        cmd = compactor_command.parse_command(["sweep", "a", "--", "-odd"], self.FLAGS)
        self.assertEqual(cmd.inputs, ["a", "-odd"])
        self.assertEqual(compactor_command.shard_args(cmd, 2, 5, "points"),
                         ["sweep", "--shard-points", "2/5", "--quiet", "a", "--", "-odd"])


class AgainstOneRun(unittest.TestCase):
    """Sharded through the driver against unsharded, on the real corpus."""

    @classmethod
    def setUpClass(cls) -> None:
        try:
            from distributed import LocalCluster
        except ImportError:
            require(False, "dask.distributed is not installed "
                    "(pip install -r drivers/dask/requirements.txt)")
        binary = find_binary()
        require(binary is not None and os.access(binary, os.X_OK),
                "no compactor binary (set COMPACTOR_BIN)")
        corpus = (REPO / os.environ.get("COMPACTOR_CORPUS", "../shared/corpus")).resolve()
        require(corpus.is_dir(), f"no corpus at {corpus} (set COMPACTOR_CORPUS)")
        probe = subprocess.run([binary, "merge", "--help"], capture_output=True)
        require(probe.returncode == 0, f"{binary} has no merge command")
        cls.binary, cls.corpus = binary, str(corpus)
        cls.cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                   dashboard_address=None)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.cluster.close()

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="compactor-dask-test-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def run_both(self, command: list[str], *driver_flags: str,
                 where: tuple[str, ...] | None = None) -> subprocess.CompletedProcess:
        """Run the command unsharded and through the driver, each in a folder
        of its own with `--out report`, and assert the two runs agree."""
        one, many = self.tmp / "single", self.tmp / "sharded"
        one.mkdir()
        many.mkdir()
        single = subprocess.run([self.binary, *command, "--out", "report"], cwd=one,
                                capture_output=True, stdin=subprocess.DEVNULL)
        where = where or ("--scheduler", self.cluster.scheduler_address)
        sharded = subprocess.run(
            [sys.executable, str(DRIVER), *where, "--shards", str(SHARDS),
             "--compactor", self.binary, "--out", "report", *driver_flags,
             "--", *command], cwd=many, capture_output=True, stdin=subprocess.DEVNULL)
        context = (f"\n$ {' '.join(command)}\nsingle stderr:\n{single.stderr.decode()}"
                   f"\ndriver stderr:\n{sharded.stderr.decode()}")
        self.assertEqual(sharded.returncode, single.returncode, context)
        self.assertEqual(sharded.stdout.decode(), single.stdout.decode(), context)
        want, got = tree(one / "report"), tree(many / "report")
        self.assertTrue(want, f"the single run wrote nothing{context}")
        self.assertEqual(sorted(got), sorted(want), "the merged files differ in name")
        differ = [name for name in want if got[name] != want[name]]
        self.assertEqual(differ, [], f"files whose bytes differ{context}")
        return sharded

    def test_replay_two_presets(self) -> None:
        res = self.run_both(["replay", self.corpus, "--preset", "default", "--preset", "opal"])
        self.assertIn(f"{SHARDS} shards over", res.stderr.decode())

    def test_check_against_the_baseline(self) -> None:
        self.run_both(["check", self.corpus, "--baseline",
                       str(REPO / "baselines" / "corpus.json")])

    def test_check_a_regression_exits_1(self) -> None:
        # The corpus baseline cut to one preset (a fifth of the work), whose
        # savings are raised: the run now saves less than the baseline.
        baseline = json.loads((REPO / "baselines" / "corpus.json").read_text())
        baseline["replay"]["presets"] = ["opal"]
        baseline["policies"] = [p for p in baseline["policies"] if p["name"] == "opal"]
        for rows in ("presets", "sessions"):
            baseline[rows] = [r for r in baseline[rows] if r["policy"] in ("opal", "recorded")]
        baseline["presets"][0]["savings_pct"] += 10
        path = self.tmp / "raised.json"
        path.write_text(json.dumps(baseline))
        res = self.run_both(["check", self.corpus, "--baseline", str(path),
                             "--summary", "summary.md"])
        self.assertEqual(res.returncode, 1, res.stderr.decode())
        summary = [(self.tmp / side / "summary.md").read_bytes() for side in ("single", "sharded")]
        self.assertEqual(summary[0], summary[1])

    def test_compare(self) -> None:
        self.run_both(["compare", self.corpus, "--preset", "default", "--preset", "codex"])

    def test_sweep_split_by_sessions(self) -> None:
        grid = self.tmp / "grid.toml"
        grid.write_text(GRID)
        self.run_both(["sweep", self.corpus, "--grid", str(grid)])

    def test_sweep_split_by_points(self) -> None:
        grid = self.tmp / "grid.toml"
        grid.write_text(GRID)
        self.run_both(["sweep", self.corpus, "--grid", str(grid)], "--split", "points")

    def test_local_workers_and_json_on_stdout(self) -> None:
        res = self.run_both(["replay", self.corpus, "--preset", "nous", "--json"],
                            where=("--local-workers", "2"))
        self.assertTrue(res.stdout.startswith(b"{"), res.stdout[:200])

    def test_shared_dir_keeps_every_partial(self) -> None:
        shared = self.tmp / "shared"
        self.run_both(["replay", self.corpus, "--preset", "opal", "-q"],
                      "--shared-dir", str(shared))
        for k in range(1, SHARDS + 1):
            self.assertTrue((shared / f"shard-{k}" / "partial.json").is_file(), k)

    def test_a_failing_shard_fails_the_run(self) -> None:
        res = subprocess.run(
            [sys.executable, str(DRIVER), "--scheduler", self.cluster.scheduler_address,
             "--shards", "2", "--compactor", self.binary, "--out", str(self.tmp / "out"),
             "--", "replay", self.corpus, "--preset", "no-such-preset"],
            capture_output=True, stdin=subprocess.DEVNULL)
        self.assertEqual(res.returncode, 2, res.stderr.decode())
        self.assertRegex(res.stderr.decode(), r"shard [12]/2 failed \(exit 2\)")
        self.assertFalse((self.tmp / "out").exists())


if __name__ == "__main__":
    unittest.main()
