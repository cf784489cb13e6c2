"""What the benches under bench/ share: the repository they belong to, the iogauge they run,
where their results store lives, and building what they run.

`IOGAUGE_BENCH_BIN` names an iogauge binary to run instead of target/release/iogauge. With it
set a bench builds nothing: the examples it runs are taken from beside that binary
(`examples/` of its directory, where cargo puts them). The test suite's smallest passes set it
to the binary the suite built, since a cargo build started inside `cargo test` would wait for
cargo's own lock.

A bench loads this file by path (bench/ is not a package):

    sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
    import benchlib
"""

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PREBUILT = os.environ.get("IOGAUGE_BENCH_BIN")
BIN = Path(PREBUILT).resolve() if PREBUILT else REPO / "target/release/iogauge"


def example(name):
    """The path of a cargo example built in release beside BIN."""
    return BIN.parent / "examples" / name


def build(*cargo_args, env=None):
    """`cargo build --release` with these arguments, in the repository; nothing when
    IOGAUGE_BENCH_BIN names a binary built already."""
    if PREBUILT:
        return
    subprocess.run(["cargo", "build", "--quiet", "--release", *cargo_args], cwd=REPO,
                   env=env, check=True)


def use_store(default_dir):
    """Names the results store (IOGAUGE_STORE, unless set already) in `default_dir` and creates
    its directory: a fresh clone has no bench/out. Returns its path."""
    os.environ.setdefault("IOGAUGE_STORE", str(Path(default_dir) / "results.sqlite"))
    store = Path(os.environ["IOGAUGE_STORE"])
    store.parent.mkdir(parents=True, exist_ok=True)
    return store
