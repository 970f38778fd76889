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
error); a failed shard's own, with its stderr; 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

SHARDABLE = ("replay", "compare", "check", "sweep")
# Flags that name what the run prints or writes on this machine: they go to
# merge, which prints and writes, and not to the shards.
MERGE_ONLY = ("--json", "--summary", "--write-baseline")
QUIET = ("-q", "--quiet")
STDERR_TAIL = 4000


@dataclass
class Command:
    """The user's compactor command, taken apart once and put back per shard."""

    sub: str
    args: list[str]  # what every shard gets, after the subcommand
    inputs: list[str]  # the path arguments
    merge_args: list[str] = field(default_factory=list)
    out: str | None = None
    quiet: bool = False


def help_flags(compactor: str, sub: str) -> dict[str, bool]:
    """Every flag `compactor SUB --help` lists, mapped to whether it takes a value.

    Reading the binary's own help keeps the driver right as flags come and go:
    it is how the driver tells `--baseline FILE` (a value) from an input path.
    """
    try:
        text = subprocess.run([compactor, sub, "--help"], capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise SystemExit(f"error: cannot run `{compactor} {sub} --help`: {err}")
    flags: dict[str, bool] = {}
    # An option's line is indented by 2 to 6 spaces; a wrapped description
    # line that starts with a flag's name is indented further.
    pattern = re.compile(r"^ {2,6}(-\w)?(?:, )?(--[\w-]+)?( <[^>]+>)?(?:\s|$)")
    for line in text.splitlines():
        m = pattern.match(line)
        for name in (m.group(1), m.group(2)) if m else ():
            if name:
                flags.setdefault(name, bool(m.group(3)))
    return flags


def parse_command(argv: list[str], flags: dict[str, bool]) -> Command:
    """Split the user's command into shard arguments, merge arguments and inputs."""
    sub, rest = argv[0], argv[1:]
    cmd = Command(sub=sub, args=[], inputs=[])
    i = 0
    while i < len(rest):
        tok = rest[i]
        name, eq, _ = tok.partition("=")
        if tok == "--":
            cmd.inputs += rest[i + 1:]
            cmd.args += rest[i:]
            break
        if not tok.startswith("-") or tok == "-":
            cmd.inputs.append(tok)
            cmd.args.append(tok)
            i += 1
            continue
        takes = flags.get(name, False) and not eq
        group = rest[i:i + 2] if takes else [tok]
        i += len(group)
        if name == "--out" or name == "-o":
            cmd.out = group[-1].partition("=")[2] if eq else group[-1]
        elif name in MERGE_ONLY:
            cmd.merge_args += group
        elif name in QUIET:
            cmd.quiet = True
            cmd.merge_args.append("--quiet")
        else:
            cmd.args += group
    return cmd


def shard_argv(compactor: str, cmd: Command, k: int | str, n: int, out: str,
               split: str) -> list[str]:
    """The command shard K runs: the user's, with the shard flags right after
    the subcommand so that a `--` among the user's arguments cannot swallow them."""
    flag = "--shard-points" if split == "points" else "--shard"
    return [compactor, cmd.sub, flag, f"{k}/{n}", "--out", out, "--quiet", *cmd.args]


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


def run_shard(k: int, n: int, cmd: Command, compactor: str, split: str, cwd: str,
              shared: str | None, stop_event: str) -> dict:
    """Run shard K on a worker; return its exit code, stderr tail and (unless a
    shared folder holds it) the partial packed as a tar.

    The process is stopped with SIGINT when the client sets `stop_event`
    (Ctrl-C): cancelling a Dask future does not stop a running task, and
    compactor leaves its output untouched when interrupted."""
    from distributed import Event

    if not os.path.isdir(cwd):
        return {"shard": k, "code": 2, "stderr": f"the worker has no folder {cwd}: give "
                "absolute input paths it can see, or --worker-cwd", "tar": None}
    tmp = None
    if shared:
        out = os.path.join(shared, f"shard-{k}")
        if os.path.isdir(out) and os.listdir(out):
            if not os.path.exists(os.path.join(out, "partial.json")):
                return {"shard": k, "code": 2, "tar": None,
                        "stderr": f"{out} exists and holds no partial: not replacing it"}
            shutil.rmtree(out)  # an earlier run's partial of this shard
    else:
        tmp = tempfile.mkdtemp(prefix=f"compactor-shard-{k}-")
        out = os.path.join(tmp, "part")
    try:
        os.makedirs(out, exist_ok=True)
        argv = shard_argv(resolve_binary(compactor, cwd), cmd, k, n, out, split)
        started = time.monotonic()
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err)
            stop = Event(stop_event)
            while proc.poll() is None:
                try:
                    proc.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    if stop.is_set():
                        proc.send_signal(signal.SIGINT)
                        proc.wait()
            err.seek(0)
            tail = err.read()[-STDERR_TAIL:].decode("utf-8", "replace")
        result = {"shard": k, "code": proc.returncode, "stderr": tail, "tar": None,
                  "seconds": time.monotonic() - started}
        # A shard that found a regression or an invariant violation exits 1 and
        # still writes its partial: merge gives the verdict for the whole run.
        written = os.path.exists(os.path.join(out, "partial.json"))
        result["ok"] = proc.returncode == 0 or (proc.returncode == 1 and written)
        if result["ok"] and not shared:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
                tar.add(out, arcname=".")
            result["tar"] = buf.getvalue()
        return result
    except OSError as e:
        return {"shard": k, "code": 2, "stderr": str(e), "tar": None, "ok": False}
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def unpack(data: bytes, dest: Path) -> None:
    """Unpack a shard's tar, refusing members that would land outside `dest`."""
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")


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
                       help="address of a running scheduler, e.g. tcp://host:8786")
    p.add_argument("--shards", type=int, required=True, metavar="N",
                   help="how many shards to split the command into")
    p.add_argument("--out", metavar="DIR",
                   help="the merged output (or give --out in the command)")
    p.add_argument("--split", choices=("sessions", "points"), default="sessions",
                   help="split by input file (default) or, for sweep, by grid point")
    p.add_argument("--compactor", default="compactor", metavar="PATH",
                   help="the binary, on the workers and here (default: compactor on PATH)")
    p.add_argument("--shared-dir", metavar="DIR",
                   help="a folder every worker and this machine share: shards write "
                        "DIR/shard-K there and nothing is transferred")
    p.add_argument("--work-dir", metavar="DIR",
                   help="where transferred partials are unpacked (default: a temp dir)")
    p.add_argument("--keep-partials", action="store_true",
                   help="keep the unpacked partials after merging")
    p.add_argument("--worker-cwd", metavar="DIR",
                   help="folder the shards run in, for relative paths (default: this one)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan and stop")
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
    compactor = resolve_binary(opts.compactor, os.getcwd())
    cmd = parse_command(command, help_flags(compactor, command[0]))
    if cmd.out and opts.out and cmd.out != opts.out:
        raise SystemExit(f"error: two outputs: --out {opts.out} and the command's --out {cmd.out}")
    cmd.out = cmd.out or opts.out
    if not cmd.out:
        raise SystemExit("error: give --out DIR (the merged output)")
    if "-" in cmd.inputs:
        raise SystemExit("error: standard input (-) cannot be sharded: name the files")
    if not cmd.inputs:
        raise SystemExit("error: name the inputs: without a path each worker would read "
                         "the logs of its own home folder")
    merge_flags = help_flags(compactor, "merge")
    for tok in cmd.merge_args:
        if tok.startswith("-") and tok.partition("=")[0] not in merge_flags:
            raise SystemExit(f"error: {tok} is not supported with sharding "
                             "(compactor merge does not take it)")
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
        shard = shard_argv(opts.compactor, cmd, "K", opts.shards, "OUT", opts.split)
        print(f"each shard K of {opts.shards} runs, in {cwd}:\n  {' '.join(shard)}\n"
              f"OUT: {where}\nthen this machine runs:\n  {compactor} merge "
              f"PARTIALS... --out {' '.join([cmd.out, *cmd.merge_args])}")
        return 0
    return run(opts, cmd, compactor, cwd, count_remotely=bool(missing))


def stop_shards(client, stop, futures) -> None:
    """Tell running shards to stop (they poll once a second) and drop the rest."""
    stop.set()
    client.cancel(futures)
    time.sleep(1.5)


def run(opts: argparse.Namespace, cmd: Command, compactor: str, cwd: str,
        count_remotely: bool) -> int:
    """Submit the shards, gather the partials, merge them; the merge's exit code."""
    from distributed import Client, Event, LocalCluster, as_completed

    n = opts.shards
    cluster = None
    made_work = opts.work_dir is None and opts.shared_dir is None
    work = Path(opts.shared_dir or opts.work_dir or tempfile.mkdtemp(prefix="compactor-dask-"))
    shared = opts.shared_dir and os.path.abspath(opts.shared_dir)
    created: list[Path] = []
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        if opts.local_workers:
            cluster = LocalCluster(n_workers=opts.local_workers, threads_per_worker=1,
                                   processes=True, dashboard_address=None)
        client = Client(cluster or opts.scheduler)
        if count_remotely:
            count, missing = client.submit(count_inputs, cmd.inputs, cwd, pure=False).result()
            if missing:
                print(f"error: no such input on the workers: {', '.join(missing)}",
                      file=sys.stderr)
                return 2
            print(describe(n, count), file=sys.stderr)
        run_id = uuid.uuid4().hex
        stop_name = f"compactor-stop-{run_id}"
        stop = Event(stop_name, client=client)
        shard_of = {client.submit(run_shard, k, n, cmd, opts.compactor, opts.split, cwd,
                                  shared, stop_name, pure=False,
                                  key=f"compactor-shard-{k}-of-{n}-{run_id[:8]}"): k
                    for k in range(1, n + 1)}
        futures = list(shard_of)
        try:
            for future in as_completed(futures):
                k = shard_of[future]
                try:
                    res = future.result()
                except Exception as err:  # the worker died or could not run the task
                    res = {"code": 2, "stderr": f"{type(err).__name__}: {err}"}
                if not res.get("ok"):
                    print(f"error: shard {k}/{n} failed (exit {res['code']}):\n"
                          f"{res['stderr'].rstrip()}", file=sys.stderr)
                    stop_shards(client, stop, futures)
                    return res["code"] or 2
                if res["tar"] is not None:
                    dest = work / f"shard-{k}"
                    if dest.exists():
                        shutil.rmtree(dest)
                    created.append(dest)
                    unpack(res["tar"], dest)
                if not cmd.quiet:
                    print(f"shard {k}/{n} done in {res['seconds']:.1f} s", file=sys.stderr)
        except KeyboardInterrupt:
            print("interrupted: stopping the shards", file=sys.stderr)
            stop_shards(client, stop, futures)
            return 130
        client.close()
        parts = [str(work / f"shard-{k}") for k in range(1, n + 1)]
        merge = [compactor, "merge", *parts, "--out", cmd.out, *cmd.merge_args]
        return subprocess.run(merge, stdin=subprocess.DEVNULL).returncode
    except KeyboardInterrupt:
        return 130
    finally:
        if cluster is not None:
            cluster.close()
        if not opts.keep_partials:
            for path in created:
                shutil.rmtree(path, ignore_errors=True)
            if made_work:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
