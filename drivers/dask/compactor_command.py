"""The user's compactor command, taken apart once and put back per shard.

Only the client uses this module. What runs on the workers stays in
compactor_dask.py, which Dask ships to them with each task, so that the workers
need dask and the binary but nothing of this repository.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

SHARDABLE = ("replay", "compare", "check", "sweep")
# What the run prints, and check's --summary file: merge prints and writes
# them, and a shard refuses --summary. (check's --write-baseline stays with the
# shards: their partials record it and merge writes it.)
MERGE_ONLY = ("--json", "--summary", "-v", "--verbose")
QUIET = ("-q", "--quiet")


@dataclass
class Command:
    """A compactor command: what each shard gets, what the merge gets."""

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
    text = subprocess.run([compactor, sub, "--help"], capture_output=True,
                          text=True, check=True).stdout
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
        if name == "--out":
            cmd.out = group[-1].partition("=")[2] if eq else group[-1]
        elif name in MERGE_ONLY:
            cmd.merge_args += group
        elif name in QUIET:
            cmd.quiet = True
            cmd.merge_args.append("--quiet")
        else:
            cmd.args += group
    return cmd


def shard_args(cmd: Command, k: int | str, n: int, split: str) -> list[str]:
    """What shard K runs after the binary, but for `--out DIR`, which the worker
    puts right after the subcommand (compactor_dask.with_out). The shard flags
    come first too, so that a `--` among the user's arguments cannot swallow them."""
    flag = "--shard-points" if split == "points" else "--shard"
    return [cmd.sub, flag, f"{k}/{n}", "--quiet", *cmd.args]

