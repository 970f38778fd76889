#!/usr/bin/env python3
"""Run one compactor command as N shards on a Dask cluster, then merge them.

Each shard is the same command with `--shard K/N` (or `--shard-points K/N`),
run by the compactor binary on a worker as a real process. Its partial output
comes back to this machine, packed as a tar, or is written straight into a
folder every machine shares. `compactor merge` then writes what the unsharded
command would have written, prints what it would print, and its exit code is
this driver's.

Examples:

  # two local worker processes, four shards
  python3 drivers/dask/compactor_dask.py --local-workers 2 --shards 4 \\
      --out merged -- replay /data/logs --preset default --preset opal

  # a running cluster whose workers see /data and have compactor on PATH
  python3 drivers/dask/compactor_dask.py --scheduler tcp://scheduler:8786 \\
      --shards 16 --out report -- check /data/logs --baseline /data/base.json

  # a shared filesystem: partials go to /shared/run1/shard-K, nothing is sent
  python3 drivers/dask/compactor_dask.py --scheduler tcp://scheduler:8786 \\
      --shards 8 --shared-dir /shared/run1 --out report -- replay /data/logs

  # a sweep split by grid point instead of by session; plan only
  python3 drivers/dask/compactor_dask.py --local-workers 2 --shards 6 \\
      --split points --dry-run --out sweep -- sweep /data/logs --grid grid.toml

Everything after `--` is the compactor command, as you would type it without
sharding; its `--out` may be given there or to the driver. Driver messages go
to stderr, so stdout carries exactly what the command prints (`--json`).

Exit codes: merge's (0 ok, 1 a regression or invariant violation, 2 an
error); a failed shard's own, with its stderr; 130 on Ctrl-C, 143 on SIGTERM.
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from typing import NoReturn

from compactor_command import SHARDABLE, Command, help_flags, parse_command, shard_args

STDERR_TAIL = 4000


def count_inputs(inputs: list[str], cwd: str) -> tuple[int, list[str]]:
    """Files under the inputs and the inputs that match nothing (run where the
    files are: here, or on a worker when this machine does not see them)."""
    count, missing = 0, []
    for raw in inputs:
        path = os.path.join(cwd, os.path.expanduser(raw))
        if os.path.isfile(path):
            count += 1
        elif os.path.isdir(path):
            count += sum(len(files) for _, _, files in os.walk(path))
        elif glob.has_magic(raw) and (hits := glob.glob(path, recursive=True)):
            count += sum(1 for h in hits if os.path.isfile(h))
        else:
            missing.append(raw)
    return count, missing


def resolve_binary(compactor: str, cwd: str) -> str:
    """A path with a slash is taken from the run's folder; a bare name from PATH."""
    if os.sep in compactor:
        return os.path.join(cwd, compactor)
    found = shutil.which(compactor)
    if not found:
        raise FileNotFoundError(f"`{compactor}` is not on PATH (give --compactor PATH)")
    return found


def with_out(binary: str, args: list[str], out: str) -> list[str]:
    """A shard's full command line: `--out` right after the subcommand."""
    return [binary, args[0], "--out", out, *args[1:]]


def run_stoppable(argv: list[str], cwd: str, stop_event: str) -> tuple[int, bytes, bytes]:
    """Run a process to its end, or send it SIGINT once `stop_event` is set:
    cancelling a Dask future does not stop a running task, and compactor
    leaves its output untouched when interrupted."""
    from distributed import Event

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        stop = Event(stop_event)
        while proc.poll() is None:
            try:
                proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                if stop.is_set():
                    proc.send_signal(signal.SIGINT)
                    proc.wait()
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read()


def shard_folder(shared: str | None, k: int) -> tuple[str, str | None]:
    """Where shard K writes, and the temp folder to remove afterwards. In a
    shared folder, an earlier run's partial of the same shard is replaced, and
    anything else is refused."""
    if not shared:
        tmp = tempfile.mkdtemp(prefix=f"compactor-shard-{k}-")
        return os.path.join(tmp, "part"), tmp
    out = os.path.join(shared, f"shard-{k}")
    if os.path.isdir(out) and os.listdir(out):
        if not os.path.exists(os.path.join(out, "partial.json")):
            raise FileExistsError(f"{out} exists and holds no partial: not replacing it")
        shutil.rmtree(out)
    return out, None


def run_shard(k: int, args: list[str], compactor: str, cwd: str, shared: str | None,
              stop_event: str, compress: bool) -> dict:
    """Run shard K (`args`, from `shard_args`) on a worker; return its exit code,
    stderr tail and (unless a shared folder holds it) the partial packed as a tar.
    It and what it calls are in this file: run as a script, its functions are
    sent to the workers by value (cloudpickle), so the workers need dask and
    the binary but nothing of this repository."""
    if not os.path.isdir(cwd):
        return {"code": 2, "stderr": f"the worker has no folder {cwd}: give absolute "
                "input paths it can see, or --worker-cwd"}
    tmp = None
    try:
        out, tmp = shard_folder(shared, k)
        os.makedirs(out, exist_ok=True)
        argv = with_out(resolve_binary(compactor, cwd), args, out)
        started = time.monotonic()
        code, said, err = run_stoppable(argv, cwd, stop_event)
        # "shard K/N: 12 session(s) from 10 input(s); partial written to ..."
        # (a sweep's: "sweep shard K/N, points J/M: ...")
        note = re.search(rb"^(?:sweep )?shard [^:\n]+: ([^;\n]+)", said, re.M)
        result = {"code": code, "stderr": err[-STDERR_TAIL:].decode("utf-8", "replace"),
                  "seconds": time.monotonic() - started, "tar": None,
                  "note": note.group(1).decode("utf-8", "replace") if note else ""}
        # A shard exits 0 once its partial is written, whatever it found (a
        # regression, an invariant violation): merge gives the run's verdict.
        result["ok"] = code == 0 and os.path.exists(os.path.join(out, "partial.json"))
        if result["ok"] and not shared:
            buf = io.BytesIO()
            # Compressed for a network (transcripts shrink about 4 times), not
            # between processes of one machine, where it only costs time.
            mode, level = ("w:gz", {"compresslevel": 1}) if compress else ("w", {})
            with tarfile.open(fileobj=buf, mode=mode, **level) as tar:
                tar.add(out, arcname=".")
            result["tar"] = buf.getvalue()
        return result
    except OSError as e:
        return {"code": 2, "stderr": str(e)}
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def unpack(data: bytes, dest: Path) -> None:
    """Unpack a shard's tar, refusing members that would land outside `dest`."""
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        tar.extractall(dest, filter="data")


def fail(message: str) -> NoReturn:
    """A usage error: exit 2, as compactor does."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        command: list[str] = []
    else:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    p = argparse.ArgumentParser(
        prog="compactor_dask.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s (--local-workers N | --scheduler ADDR) --shards N "
              "[options] -- COMMAND [ARGS...]")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--local-workers", type=int, metavar="N",
                       help="start a local cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDR",
                       help="a running scheduler's address, e.g. tcp://host:8786")
    for flag, meta, text in (
        ("--shards", "N", "how many shards to split the command into (required)"),
        ("--out", "DIR", "the merged output (or give --out in the command)"),
        ("--compactor", "PATH", "the binary, on the workers and here (default: compactor)"),
        ("--shared-dir", "DIR", "a folder all machines share: shard K writes DIR/shard-K "
                                "there and nothing is transferred"),
        ("--work-dir", "DIR", "where sent partials are unpacked (default: a temp dir)"),
        ("--worker-cwd", "DIR", "the folder shards run in (default: this one)"),
    ):
        p.add_argument(flag, metavar=meta, help=text, required=flag == "--shards",
                       type=int if meta == "N" else str)
    p.set_defaults(compactor="compactor")
    p.add_argument("--split", choices=("sessions", "points"), default="sessions",
                   help="split by input file (default) or, for sweep, by grid point")
    p.add_argument("--keep-partials", action="store_true",
                   help="keep the unpacked partials after merging")
    p.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    opts = p.parse_args(argv)
    if not command:
        p.error("give the compactor command after --, e.g. -- replay logs/ --preset opal")
    if command[0] not in SHARDABLE:
        p.error(f"`{command[0]}` cannot be sharded; one of: {', '.join(SHARDABLE)}")
    if opts.shards < 1 or (opts.local_workers is not None and opts.local_workers < 1):
        p.error("--shards and --local-workers must be at least 1")
    if opts.split == "points" and command[0] != "sweep":
        p.error("--split points is for sweep only")
    return opts, command


def plan(opts: argparse.Namespace, command: list[str]) -> tuple[Command, str]:
    """Check the command against the binary here before any worker is busy."""
    try:
        compactor = resolve_binary(opts.compactor, os.getcwd())
    except FileNotFoundError as err:
        fail(str(err))
    try:
        cmd = parse_command(command, help_flags(compactor, command[0]))
        merge_flags = help_flags(compactor, "merge")
    except (OSError, subprocess.CalledProcessError) as err:
        fail(f"cannot read the flags of `{compactor}`: {err}")
    if cmd.out and opts.out and cmd.out != opts.out:
        fail(f"two outputs: --out {opts.out} and the command's --out {cmd.out}")
    cmd.out = cmd.out or opts.out
    if not cmd.out:
        fail("give --out DIR (the merged output)")
    if "-" in cmd.inputs:
        fail("standard input (-) cannot be sharded: name the files")
    if not cmd.inputs:
        fail("name the inputs: without a path each worker would read its own home's logs")
    if any(a.partition("=")[0] in ("--shard", "--shard-points") for a in cmd.args):
        fail("leave --shard out of the command: the driver adds it")
    for tok in cmd.merge_args:
        if tok.startswith("-") and tok.partition("=")[0] not in merge_flags:
            fail(f"{tok} is not supported with sharding (compactor merge does not take it)")
    return cmd, compactor


def describe(n: int, count: int) -> str:
    return f"{n} shard{'s' * (n != 1)} over {count} input file{'s' * (count != 1)}"


def main(argv: list[str]) -> int:
    opts, command = parse_args(argv)
    cmd, compactor = plan(opts, command)
    cwd = os.path.abspath(opts.worker_cwd or os.getcwd())
    count, missing = count_inputs(cmd.inputs, cwd)
    if missing and opts.local_workers:
        print(f"error: no such input: {', '.join(missing)}", file=sys.stderr)
        return 2
    if not missing:
        print(describe(opts.shards, count), file=sys.stderr)
    if opts.dry_run:
        if missing:
            print(f"not seen here, to be found by the workers: {', '.join(missing)}",
                  file=sys.stderr)
        where = (os.path.join(opts.shared_dir, "shard-K") if opts.shared_dir
                 else "a temp folder on the worker, sent back here as a tar")
        shard = with_out(opts.compactor, shard_args(cmd, "K", opts.shards, opts.split), "OUT")
        print(f"each shard K of {opts.shards} runs, in {cwd}:\n  {shlex.join(shard)}\n"
              f"OUT: {where}\nthen this machine runs:\n  {compactor} merge "
              f"PARTIALS... --out {shlex.join([cmd.out, *cmd.merge_args])}")
        return 0
    return run(opts, cmd, compactor, cwd, count_remotely=bool(missing))


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM, with the exit code compactor itself would give."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.code = 128 + signum


def on_signal(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def gather(futures: dict, n: int, work: Path, quiet: bool,
           created: list[Path]) -> int:
    """Wait for every shard and unpack its partial into work/shard-K; at the
    first failure, stop the others and return its exit code (0 when all ran)."""
    from distributed import as_completed

    for future in as_completed(list(futures)):
        k = futures[future]
        try:
            res = future.result()
        except Exception as err:  # the worker died, or could not run the task
            res = {"code": 2, "stderr": f"{type(err).__name__}: {err}"}
        if not res.get("ok"):
            print(f"error: shard {k}/{n} failed (exit {res['code']}):\n"
                  f"{res['stderr'].rstrip()}", file=sys.stderr)
            return res["code"] or 2
        if res["tar"] is not None:
            dest = work / f"shard-{k}"
            shutil.rmtree(dest, ignore_errors=True)
            created.append(dest)
            unpack(res["tar"], dest)
        if not quiet:
            note = f": {res['note']}" if res["note"] else ""
            print(f"shard {k}/{n} done in {res['seconds']:.1f} s{note}", file=sys.stderr)
    return 0


def run(opts: argparse.Namespace, cmd: Command, compactor: str, cwd: str,
        count_remotely: bool) -> int:
    """Submit the shards, gather the partials, merge them; the merge's exit code."""
    from distributed import Client, Event, LocalCluster

    n, cluster, client, created = opts.shards, None, None, []
    made_work = opts.work_dir is None and opts.shared_dir is None
    work = Path(opts.shared_dir or opts.work_dir or tempfile.mkdtemp(prefix="compactor-dask-"))
    shared = opts.shared_dir and os.path.abspath(opts.shared_dir)
    run_id = uuid.uuid4().hex
    stop_name, futures = f"compactor-stop-{run_id}", {}
    try:
        if opts.local_workers:
            # Local workers inherit an ignored SIGINT: Ctrl-C in the terminal is
            # the driver's to handle, not a traceback from each worker.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            cluster = LocalCluster(n_workers=opts.local_workers, threads_per_worker=1,
                                   processes=True, dashboard_address=None)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, on_signal)
        client = Client(cluster or opts.scheduler)
        if count_remotely:
            count, missing = client.submit(count_inputs, cmd.inputs, cwd, pure=False).result()
            if missing:
                print(f"error: no such input on the workers: {', '.join(missing)}",
                      file=sys.stderr)
                return 2
            print(describe(n, count), file=sys.stderr)
        futures = {client.submit(run_shard, k, shard_args(cmd, k, n, opts.split),
                                 opts.compactor, cwd, shared, stop_name,
                                 not opts.local_workers, pure=False,
                                 key=f"compactor-shard-{k}-of-{n}-{run_id[:8]}"): k
                   for k in range(1, n + 1)}
        code = gather(futures, n, work, cmd.quiet, created)
        if code:
            return code
        client.close()
        parts = [str(work / f"shard-{k}") for k in range(1, n + 1)]
        merge = [compactor, "merge", *parts, "--out", cmd.out, *cmd.merge_args]
        return subprocess.run(merge, stdin=subprocess.DEVNULL).returncode
    except Interrupted as sig:
        if client and client.status == "running":
            print("interrupted: stopping the shards", file=sys.stderr)
        return sig.code
    finally:
        if client and client.status == "running":
            if not all(f.done() for f in futures):
                # Cancelling a future leaves its task running: the shards poll
                # this event once a second and pass SIGINT to their compactor.
                Event(stop_name, client=client).set()
                client.cancel(list(futures))
                time.sleep(1.5)
            client.close()
        if cluster is not None:
            cluster.close()
        if not opts.keep_partials:
            for path in created:
                shutil.rmtree(path, ignore_errors=True)
            if made_work:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
