"""The compiled fast path's loader: a module runs compiled only from a build
of its exact current source, Python otherwise, and never when
``INTBED_PURE_PYTHON`` is set; a failed build is one clear error."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from common.errors import IntbedError
from common.paths import PACKAGE_ROOT, child_env
from fastpath import loader
from fastpath.build import Job, build, compiler, module_job

MODULE = "accpkg.hot"
SOURCE = textwrap.dedent("""
    def step(x):
        return (x * 3 + 1) & 0xFFFF_FFFF_FFFF_FFFF_FFFF

    def kind():
        return type(step).__name__
    """)

_PROBE = textwrap.dedent("""
    import json, sys
    from fastpath import loader
    finder = loader.Finder(("accpkg.hot",))
    if loader.enabled():
        sys.meta_path.insert(0, finder)
    import accpkg.hot as m
    print(json.dumps({"kind": m.kind(), "step": m.step(2**70 + 5),
                      "file": m.__file__, "missing": sorted(finder.missing)}))
    """)


def _have_compiler() -> str | None:
    try:
        compiler()
    except IntbedError as exc:
        return str(exc)
    return None


def _probe(root: Path, accel_dir: Path, script: str = _PROBE, **env: str) -> dict:
    """What ``script`` prints (one JSON object), run with ``root`` on the
    import path and builds looked for in ``accel_dir``."""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True,
        env=child_env({"PYTHONPATH": f"{root}:{child_env()['PYTHONPATH']}",
                       loader.DIR_ENV: str(accel_dir), **env}))
    return json.loads(proc.stdout)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    pkg = tmp_path / "src" / "accpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "hot.py").write_text(SOURCE)
    return tmp_path / "src"


def test_a_build_of_the_current_source_is_loaded_and_agrees(
        package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if (why := _have_compiler()) is not None:
        pytest.skip(why)
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path / "accel"))
    source = (package / "accpkg" / "hot.py").read_bytes()
    out = build(Job(MODULE, source.decode(), loader.artifact_path(MODULE, source)))
    assert out.is_file() and out.parent.parent == tmp_path / "accel"

    compiled = _probe(package, tmp_path / "accel")
    assert compiled["kind"] == "cython_function_or_method", compiled
    assert compiled["file"] == str(out) and compiled["missing"] == []
    pure = _probe(package, tmp_path / "accel", INTBED_PURE_PYTHON="1")
    assert pure["kind"] == "function" and pure["file"].endswith("hot.py"), pure
    # Python integers of any width survive compilation unchanged.
    assert compiled["step"] == pure["step"] == ((2**70 + 5) * 3 + 1) & (2**80 - 1)

    # An edited source no longer matches the build: Python runs it, and the
    # finder says which build it looked for.
    (package / "accpkg" / "hot.py").write_text(SOURCE + "\n# edited\n")
    edited = _probe(package, tmp_path / "accel")
    assert edited["kind"] == "function" and edited["missing"] == [MODULE], edited


def test_a_source_that_does_not_build_is_one_error_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if (why := _have_compiler()) is not None:
        pytest.skip(why)
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path / "accel"))
    out = tmp_path / "accel" / "broken.so"
    with pytest.raises(IntbedError) as err:
        build(Job("accpkg.broken", "def f(:\n    pass\n", out))
    message = str(err.value)
    assert "building accpkg.broken failed" in message and "\n" not in message
    assert not out.exists() and list((tmp_path / "accel").iterdir()) == []  # nothing half-made



def test_declarations_changed_during_a_build_leave_no_artifact(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's .pxd files are read from the tree while Cython runs, and
    the artifact's key was taken from them when the job was made: when they
    differ by the end of the build (an edit during a long one), the build
    is one clear error and nothing is put under the old key."""
    import fastpath.build as accel_build

    if (why := _have_compiler()) is not None:
        pytest.skip(why)
    job = Job(MODULE, SOURCE, tmp_path / "accel" / "hot.so")
    assert job.declared == accel_build.declarations()  # taken when the job was made
    monkeypatch.setattr(accel_build, "declarations", lambda: "edited meanwhile")
    with pytest.raises(IntbedError) as err:
        build(job)
    message = str(err.value)
    assert "changed while it was being built" in message and "accel build" in message
    assert "\n" not in message
    assert not job.out.exists() and list((tmp_path / "accel").iterdir()) == []

def test_pure_python_turns_the_fast_path_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(loader.PURE_ENV, "1")
    assert not loader.enabled()
    assert loader.load_pipeline("x = 1\n") is None
    monkeypatch.setenv(loader.PURE_ENV, "0")
    assert loader.enabled()


def test_artifacts_are_keyed_by_source_and_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path))
    a = loader.artifact_path("m.a", b"x = 1\n")
    assert a == loader.artifact_path("m.a", b"x = 1\n")
    assert a != loader.artifact_path("m.a", b"x = 2\n")
    assert a != loader.artifact_path("m.b", b"x = 1\n")
    assert loader.pipeline_key("y = 1\n") != loader.pipeline_key("y = 2\n")


_CLASS_PROBE = textwrap.dedent("""
    import json, sys
    from fastpath import loader
    finder = loader.Finder(("accpkg.box",))
    sys.meta_path.insert(0, finder)
    import accpkg.box as m
    b = m.Box(2**70)
    b.bump()
    print(json.dumps({"heap_type": bool(m.Box.__flags__ & (1 << 9)), "n": b.n,
                      "missing": sorted(finder.missing)}))
    """)

BOX = textwrap.dedent("""
    class Box:
        __slots__ = ("n",)

        def __init__(self, n):
            self.n = n

        def bump(self):
            self.n = self.n * 2 + 1
    """)


def test_a_pxd_beside_the_source_makes_an_extension_type_and_is_part_of_the_key(
        package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if (why := _have_compiler()) is not None:
        pytest.skip(why)
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path / "accel"))
    py = package / "accpkg" / "box.py"
    py.write_text(BOX)
    py.with_suffix(".pxd").write_text("cdef class Box:\n    cdef public object n\n")
    source = loader.module_source(py)
    assert source != py.read_bytes()  # the declarations count
    build(Job("accpkg.box", BOX, loader.artifact_path("accpkg.box", source),
              pxd=py.with_suffix(".pxd").read_text()))

    def probe() -> dict:
        return _probe(package, tmp_path / "accel", _CLASS_PROBE)

    built = probe()
    assert built == {"heap_type": False, "n": 2**71 + 1, "missing": []}, built
    py.with_suffix(".pxd").write_text("cdef class Box:\n    cdef public object n  # edited\n")
    edited = probe()
    assert edited == {"heap_type": True, "n": 2**71 + 1, "missing": ["accpkg.box"]}, edited


def test_the_sim_modules_build_from_their_source_and_declarations() -> None:
    sim = [m for m in loader.MODULES if m.startswith("dataplane.targets.sim")]
    assert len(sim) == 3  # the event queue, the simulator, the network
    for name in sim:
        job = module_job(name)
        assert job.pxd is not None and "cdef class" in job.pxd
        key = loader.module_source(PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".py"))
        assert key.startswith(job.source.encode() + b"\0pxd\0" + job.pxd.encode())
        assert job.out == loader.artifact_path(name, key)
    # A hot module without declarations of its own builds from its source
    # alone (whichever one has none today).
    root = Path(loader.__file__).resolve().parents[1]
    plain = [m for m in loader.MODULES
             if not root.joinpath(*m.split(".")).with_suffix(".pxd").is_file()]
    assert plain
    for name in plain:
        assert module_job(name).pxd is None
        assert module_job(name).out == loader.artifact_path(name, module_job(name).source.encode())


def test_a_modules_key_covers_the_declarations_it_cimports() -> None:
    """The sim's network is compiled against the simulator's and the
    engine's declarations: a change to either, or to the module behind
    them, must change its key (a stale build must not load beside a module
    that runs as Python: it assumes that module's layout)."""
    sim = PACKAGE_ROOT / "dataplane" / "targets" / "sim"
    runtime = PACKAGE_ROOT / "dataplane" / "runtime"
    source = loader.module_source(sim / "network.py")
    items = runtime / "items.pxd"
    for part in (sim / "network.pxd", sim / "events.pxd", runtime / "switch.pxd", items,
                 sim / "events.py", runtime / "switch.py", sim / "heap4.pxd", sim / "heap4.py"):
        assert source.count(part.read_bytes()) == 1, part
    # The simulator's declarations cimport its event queue's, which cimport
    # one project file with no module behind it: each counted once.
    events = loader.module_source(sim / "events.py")
    own = (sim / "events.py").read_bytes() + b"\0pxd\0" + (sim / "events.pxd").read_bytes()
    queue = (b"\0pxd\0" + (sim / "heap4.pxd").read_bytes()
             + b"\0py\0" + (sim / "heap4.py").read_bytes())
    assert events == own + queue + b"\0pxd\0" + items.read_bytes()


def test_modules_that_share_declarations_are_one_group() -> None:
    groups = loader.groups()
    sim = frozenset({"dataplane.runtime.switch", "dataplane.targets.sim.events",
                     "dataplane.targets.sim.heap4", "dataplane.targets.sim.network",
                     "orchestration.apps.traffic"})
    for name in sim:
        assert groups[name] == sim
    assert groups["traffic.sender"] == {"traffic.packets", "traffic.sender"}
    # A table and its compiled-only lpm slots, which read its declarations.
    assert groups["dataplane.runtime.tables"] == {"dataplane.runtime.tables",
                                                  "dataplane.runtime.lpm_slots"}
    assert set(groups) == set(loader.MODULES)


_GROUP_PROBE = textwrap.dedent("""
    import json, sys
    from fastpath import loader
    said = []
    group = frozenset({"accpkg.hot", "accpkg.cold"})
    finder = loader.Finder(tuple(group), warn=said.append,
                           linked={name: group for name in group})
    sys.meta_path.insert(0, finder)
    import accpkg.cold as c
    import accpkg.hot as h
    print(json.dumps({"hot": h.__file__, "cold": c.__file__, "said": said,
                      "missing": sorted(finder.missing), "held": sorted(finder.held_back)}))
    """)


def test_a_group_loads_compiled_only_as_a_whole(
        package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two built modules of one group: both load compiled; after an edit of
    one, both run as Python, with one warning that names the edited one
    and the command to run."""
    if (why := _have_compiler()) is not None:
        pytest.skip(why)
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path / "accel"))
    hot, cold = package / "accpkg" / "hot.py", package / "accpkg" / "cold.py"
    cold.write_text("def f():\n    return 7\n")
    for name, py in (("accpkg.hot", hot), ("accpkg.cold", cold)):
        build(Job(name, py.read_text(), loader.artifact_path(name, py.read_bytes())))

    def probe() -> dict:
        return _probe(package, tmp_path / "accel", _GROUP_PROBE)

    both = probe()
    assert not both["hot"].endswith(".py") and not both["cold"].endswith(".py"), both
    assert both["said"] == [] and both["missing"] == [] and both["held"] == []
    hot.write_text(SOURCE + "\n# edited\n")
    edited = probe()
    assert edited["hot"].endswith("hot.py") and edited["cold"].endswith("cold.py"), edited
    assert edited["missing"] == ["accpkg.hot"] and edited["held"] == ["accpkg.cold"]
    assert len(edited["said"]) == 1
    line = edited["said"][0]
    assert line.startswith("warning: accpkg.hot has no compiled build") and "accpkg.cold" in line
    assert line.endswith("run `intbed accel build`")


def test_modules_never_built_run_as_python_without_a_warning(
        package: Path, tmp_path: Path) -> None:
    """A checkout without the build (no compiler) is not a stale one: it
    says nothing on every run (``intbed accel status`` tells)."""
    (package / "accpkg" / "cold.py").write_text("def f():\n    return 7\n")
    out = _probe(package, tmp_path / "empty", _GROUP_PROBE)
    assert out["said"] == [] and out["missing"] == ["accpkg.cold", "accpkg.hot"], out


def test_a_module_that_cimports_project_declarations_builds_from_any_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``intbed accel build`` started outside the checkout: the event
    queue's declarations cimport the engine's item helpers (items.pxd),
    which Cython must find on its include path, not in the current
    directory."""
    if (why := _have_compiler()) is not None:
        pytest.skip(why)
    monkeypatch.chdir(tmp_path)
    job = module_job("dataplane.targets.sim.heap4")
    assert job.pxd is not None and "dataplane.runtime.items" in job.pxd
    out = build(job, out=tmp_path / "heap4.so")
    assert out.is_file() and out.stat().st_size > 0


def test_a_group_is_decided_alike_when_no_checkout_is_on_sys_path(tmp_path: Path) -> None:
    """The ``intbed`` console script of an editable install runs with no
    checkout directory on ``sys.path`` (the install's finder maps the
    packages): the members of a group not imported yet must still be found
    by their source, or the first member imported loads compiled and the
    rest silently as Python (a lookup of a compiled-only helper then fails
    partway through a run)."""
    script = ("import json, dataplane.runtime.tables, dataplane.targets.sim.events\n"
              "import dataplane.targets.sim.network, dataplane.runtime.lpm_slots\n"
              "import orchestration.apps.traffic\n"
              "from fastpath import loader\n"
              "print(json.dumps(loader.loaded()))\n")
    env = child_env()
    env.pop("PYTHONPATH", None)
    env.pop(loader.PURE_ENV, None)
    probe = subprocess.run([sys.executable, "-c", "import dataplane, sys; "
                            "print(any(p and (Path(p) / 'dataplane').is_dir() for p in sys.path))"
                            .replace("Path", "__import__('pathlib').Path")],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    if probe.returncode != 0 or probe.stdout.strip() != "False":
        pytest.skip("intbed is not an editable install here (its packages come from sys.path)")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    sim = {loaded[n] for n in ("dataplane.targets.sim.events", "dataplane.targets.sim.network",
                               "orchestration.apps.traffic")}
    tables = {loaded[n] for n in ("dataplane.runtime.tables", "dataplane.runtime.lpm_slots")}
    assert len(sim) == 1 and len(tables) == 1, loaded
