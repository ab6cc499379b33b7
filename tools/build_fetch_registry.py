"""Builds ``src/vlneval/fetch/registry.json`` (and its manifests) from known-good copies.

Every file ``vlneval data fetch`` downloads gets its SHA-256 and size from bytes we hold:

* the project's shared data folder (``--shared DIR``): a ``X.gz`` there whose source has no ``.gz``
  is the source's exact bytes compressed, so the decompressed bytes are hashed;
* a git directory of the source repository (``--git owner/name=GITDIR``, any clone or bare
  mirror holding the pinned commit): the blob at the pinned commit is hashed.

Where both exist they must agree with the git tree's blob SHA-1 (checked here). A file whose
blob is not available (too large for the copy we hold) is recorded by its git blob SHA-1 alone,
which ``raw.githubusercontent.com`` serves at a pinned commit byte for byte; a file outside git
with no known-good copy is recorded without a checksum (fetched only with ``--allow-unverified``).

Usage::

    python tools/build_fetch_registry.py --shared ../shared/data \\
        --git peteanderson80/Matterport3DSimulator=PATH ... [--check]

``--check`` rebuilds in memory and fails if the committed registry differs.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "vlneval" / "fetch"
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"

M3D = "peteanderson80/Matterport3DSimulator", "589d091b111333f9e9f9d6cfd021b2eb68435925"
# A third-party commit of the files the official R2R download script fetched (its
# tasks/R2R/data holds download.sh beside them); the only copy of R2R_train.json as Dropbox
# serves it (the shared copy, from Fine-Grained-R2R, has one trailing newline more).
R2R_DROPBOX_COPY = "sadanand1120/Matterport3DSimulator", "b2f1d87567ff48df61a38d49ab9b9a082fede630"
FGR2R = "YicongHong/Fine-Grained-R2R", "305ed4cd219d79306bc38650899edc14cfdcfb69"
PTA = "aimagelab/perceive-transform-and-act", "8e688ce41942c2bd5e8790d6520be06fdb89c4ca"
REVERIE = "YuankaiQi/REVERIE", "0fe0955705c4c998729c33f59b1a4e965ab86e27"
REVERIE_OBJPOS = "YuankaiQi/REVERIE", "d508c6b2a1c9eb6bc00ceaee61c36a22af8fcdc4"
TOUCHDOWN = "lil-lab/touchdown", "2ad8ef2664d1aa8ff1a8eebf88b9e88b2cb1d1c6"
MAP2SEQ = "raphael-sch/map2seq_vln", "f27b05f18764c043e036c1df62a5ca205017ed09"
DCVLN = "sohamtiwari3120/Discrete-Continuous-VLN", "0131ad8fd0854385cfab83286384e63a96b001f0"

R2R_DROPBOX = {
    "train": "hh5qec8o5urcztn",
    "val_seen": "8ye4gqce7v8yzdm",
    "val_unseen": "p6hlckr70a07wka",
    "test": "w4pnbwqamwzdwd1",
}
VLNCE_ZIP = (
    "https://drive.usercontent.google.com/download?id=1fo8F4NKgZDH-bPSdVU3cONAkt5EW-tyr"
    "&export=download&confirm=t"
)
# The v2 boxes, as tasks/REVERIE/data_v2/"download BBoxes v2.txt" links them (Google Drive).
REVERIE_V2_BBOXES = (
    "https://drive.usercontent.google.com/download?id=1QXvcfIdxCyMxuamg2rTSZjLqdz5pVUyV"
    "&export=download&confirm=t"
)
VLNCE_SPLIT_FILES = [
    "train/train.json.gz",
    "train/train_gt.json.gz",
    "val_seen/val_seen.json.gz",
    "val_seen/val_seen_gt.json.gz",
    "val_unseen/val_unseen.json.gz",
    "val_unseen/val_unseen_gt.json.gz",
    "test/test.json.gz",
]


@dataclass
class Spec:
    """Where one file comes from and what vouches for its bytes."""

    path: str  # under the data root
    url: str
    shared: str | None = None  # path under the shared data folder
    git: tuple[str, str, str] | None = None  # (repo, commit, path): the blob that vouches
    note: str = ""
    # other known-good copies of the same content: (shared path, (repo, commit, path))
    alternates: list[tuple[str, tuple[str, str, str]]] = field(default_factory=list)
    optional: bool = False  # the dataset is usable without it


@dataclass
class Dataset:
    name: str
    title: str
    licence: str
    files: list[Spec] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    archive: dict[str, object] | None = None
    # (folder under the root, URL of that folder, manifest file name, its files)
    manifests: list[tuple[str, str, str, list[Spec]]] = field(default_factory=list)
    note: str = ""


class Sources:
    """The shared folder and the git directories given on the command line.

    Each pinned tree is listed once (``git ls-tree -r``) and blobs are read through one
    ``git cat-file --batch`` process per repository.
    """

    def __init__(self, shared: Path, gits: dict[str, Path]) -> None:
        self.shared, self.gits = shared, gits
        self._trees: dict[tuple[str, str], dict[str, str]] = {}
        self._batch: dict[str, subprocess.Popen[bytes]] = {}

    def _tree(self, repo: str, commit: str) -> dict[str, str] | None:
        if repo not in self.gits:
            return None
        if (repo, commit) not in self._trees:
            out = subprocess.run(
                ["git", f"--git-dir={self.gits[repo]}", "ls-tree", "-r", commit],
                capture_output=True,
                check=True,
            ).stdout.decode()
            tree = {}
            for line in out.splitlines():
                meta, path = line.split("\t", 1)
                tree[path] = meta.split()[2]
            self._trees[repo, commit] = tree
        return self._trees[repo, commit]

    def tree_sha1(self, repo: str, commit: str, path: str) -> str | None:
        tree = self._tree(repo, commit)
        return tree.get(path) if tree is not None else None

    def tree_names(self, repo: str, commit: str, folder: str) -> list[str]:
        tree = self._tree(repo, commit)
        if tree is None:
            raise SystemExit(f"no tree {repo}@{commit}; pass --git {repo}=GITDIR")
        prefix = folder.rstrip("/") + "/"
        return sorted(
            p[len(prefix) :] for p in tree if p.startswith(prefix) and "/" not in p[len(prefix) :]
        )

    def blob(self, repo: str, commit: str, path: str) -> bytes | None:
        sha = self.tree_sha1(repo, commit, path)
        if sha is None:
            return None
        proc = self._batch.get(repo)
        if proc is None:
            proc = subprocess.Popen(
                ["git", f"--git-dir={self.gits[repo]}", "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            self._batch[repo] = proc
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if header[-1] == b"missing":
            return None
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after the content
        return data

    def shared_bytes(self, rel: str, official_name: str) -> bytes | None:
        local = self.shared / rel
        if not local.exists():
            return None
        data = local.read_bytes()
        if local.name.endswith(".gz") and not official_name.endswith(".gz"):
            data = gzip.decompress(data)
        return data


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def entry(spec: Spec, src: Sources) -> dict[str, object]:
    """The registry record of one file: sha256/size from bytes, else the git blob SHA-1."""
    tree = src.tree_sha1(*spec.git) if spec.git else None
    data = src.shared_bytes(spec.shared, spec.path) if spec.shared else None
    blob = src.blob(*spec.git) if spec.git else None
    if data is not None and blob is not None and data != blob:
        raise SystemExit(f"{spec.path}: the shared copy and the git blob differ")
    data = data if data is not None else blob
    if data is not None and tree is not None and git_blob_sha1(data) != tree:
        raise SystemExit(f"{spec.path}: bytes do not match the git tree's blob {tree}")
    rec: dict[str, object] = {"path": spec.path, "url": spec.url}
    if data is not None:
        rec["sha256"] = hashlib.sha256(data).hexdigest()
        rec["size"] = len(data)
    if tree is not None:
        rec["git_sha1"] = tree
    if spec.note:
        rec["note"] = spec.note
    if spec.optional:
        rec["optional"] = True
    alts = []
    for shared, git in spec.alternates:
        alt = entry(Spec(spec.path, spec.url, shared, git), src)
        alts.append({"sha256": alt["sha256"], "size": alt["size"], "git_sha1": alt["git_sha1"]})
    if alts:
        rec["alternates"] = alts
    return rec


def raw(src: tuple[str, str], path: str, target: str, shared: str | None = None) -> Spec:
    repo, commit = src
    return Spec(
        target, RAW.format(repo=repo, commit=commit, path=path), shared, (repo, commit, path)
    )


def datasets(src: Sources) -> list[Dataset]:
    """Every dataset: names, licences and the files at the layout vlneval reads."""
    conn = Dataset(
        "connectivity",
        "Matterport3D navigation graphs (90 scans), Matterport3DSimulator connectivity/",
        "matterport3d",
        aliases=["graphs", "matterport3d"],
    )
    for name in src.tree_names(*M3D, "connectivity"):
        shared = f"matterport3d/connectivity/{name}" + (".gz" if name.endswith(".json") else "")
        conn.files.append(
            raw(M3D, f"connectivity/{name}", f"matterport3d/connectivity/{name}", shared)
        )

    r2r = Dataset(
        "r2r", "Room-to-Room (Anderson et al. 2018)", "matterport3d", requires=["connectivity"]
    )
    for split, key in R2R_DROPBOX.items():
        name = f"R2R_{split}.json"
        spec = Spec(f"r2r/{name}", f"https://www.dropbox.com/s/{key}/{name}?dl=1")
        if split == "train":
            spec.git = (*R2R_DROPBOX_COPY, f"tasks/R2R/data/{name}")
            spec.note = (
                "bytes as the Dropbox link serves them (committed beside download.sh in "
                "sadanand1120/Matterport3DSimulator); the copy in Fine-Grained-R2R "
                "source/R2R-original has one trailing newline more and is accepted too"
            )
            spec.alternates = [(f"r2r/{name}.gz", (*FGR2R, f"source/R2R-original/{name}"))]
        else:
            spec.shared, spec.git = f"r2r/{name}.gz", (*FGR2R, f"source/R2R-original/{name}")
        r2r.files.append(spec)

    r4r = Dataset(
        "r4r",
        "Room-for-Room (Jain et al. 2019), as generated from R2R by google-research r4r",
        "matterport3d",
        requires=["connectivity"],
        note="Google distributes a generator, not the files; these are the generated files "
        "published in aimagelab/perceive-transform-and-act.",
    )
    for split in ("train", "val_seen", "val_unseen"):
        name = f"R4R_{split}.json"
        r4r.files.append(raw(PTA, f"tasks/R2R/data/{name}", f"r4r/{name}", f"r4r/{name}.gz"))

    rev = Dataset(
        "reverie",
        "REVERIE (Qi et al. 2020): v1 and v2 episodes, v1 and v2 object boxes, v2 object centres",
        "matterport3d",
        requires=["connectivity"],
        note="The v2 boxes (data_v2/BBoxes.json) are on Google Drive only, linked from the "
        "repository's data_v2/'download BBoxes v2.txt' with no checksum, and their bytes were "
        "not available to us: fetched only with --allow-unverified (and checked to be JSON); "
        "without them v2 is scored with the v1 boxes (with a warning).",
    )
    for sub, target in (("data", "reverie"), ("data_v2", "reverie/data_v2")):
        for split in ("train", "val_seen", "val_unseen", "test"):
            name = f"REVERIE_{split}.json"
            rev.files.append(
                raw(
                    REVERIE,
                    f"tasks/REVERIE/{sub}/{name}",
                    f"{target}/{name}",
                    f"{target}/{name}.gz",
                )
            )
    rev.files.append(
        raw(
            REVERIE_OBJPOS,
            "tasks/REVERIE/data_v2/objpos.json",
            "reverie/data_v2/objpos.json",
            "reverie/data_v2/objpos.json.gz",
        )
    )
    rev.files.append(
        Spec(
            "reverie/data_v2/BBoxes.json",
            REVERIE_V2_BBOXES,
            note="unverified: the Google Drive file of data_v2/'download BBoxes v2.txt' (no "
            "checksum published; not available to check)",
            optional=True,
        )
    )
    bbox = [
        raw(REVERIE, f"tasks/REVERIE/data/BBox/{n}", f"reverie/BBox/{n}")
        for n in src.tree_names(*REVERIE, "tasks/REVERIE/data/BBox")
    ]
    bbox_url = RAW.format(repo=REVERIE[0], commit=REVERIE[1], path="tasks/REVERIE/data/BBox/")
    rev.manifests.append(("reverie/BBox/", bbox_url, "reverie_bbox.json.gz", bbox))

    ndh = Dataset(
        "ndh",
        "CVDN/NDH (Thomason et al. 2019), from cvdn.dev as tasks/NDH/data/download.sh fetches it",
        "matterport3d",
        requires=["connectivity"],
        aliases=["cvdn"],
        note="No checksum is published for the cvdn.dev files (the copies on GitHub are "
        "re-encoded), so they are fetched only with --allow-unverified.",
    )
    for split, url_path in (
        ("train", "train_val/train.json"),
        ("val_seen", "train_val/val_seen.json"),
        ("val_unseen", "train_val/val_unseen.json"),
        ("test", "test_cleaned/test_cleaned.json"),
    ):
        ndh.files.append(Spec(f"cvdn/NDH/{split}.json", f"https://cvdn.dev/dataset/NDH/{url_path}"))

    tgraph = Dataset("touchdown-graph", "Touchdown street graph (29,641 panoramas)", "cc-by-4.0")
    for name in ("nodes.txt", "links.txt"):
        tgraph.files.append(
            raw(TOUCHDOWN, f"graph/{name}", f"touchdown/graph/{name}", f"touchdown/graph/{name}.gz")
        )
    td = Dataset(
        "touchdown",
        "Touchdown (Chen et al. 2019): navigation and SDR routes, original split",
        "cc-by-4.0",
        requires=["touchdown-graph"],
    )
    for split in ("train", "dev", "test"):
        td.files.append(raw(TOUCHDOWN, f"data/{split}.json", f"touchdown/data/{split}.json"))
    tdu = Dataset(
        "touchdown-unseen",
        "Touchdown unseen-area re-split (Schumann & Riezler 2022), map2seq_vln",
        "cc-by-4.0",
        requires=["touchdown-graph"],
    )
    base = "datasets/touchdown_unseen"
    for split in ("train", "dev", "test"):
        tdu.files.append(
            raw(
                MAP2SEQ,
                f"{base}/data/{split}.json",
                f"touchdown/touchdown_unseen_split/{split}.json",
                f"touchdown/touchdown_unseen_split/{split}.json.gz",
            )
        )
    tdu.files.append(
        raw(
            MAP2SEQ,
            f"{base}/graph/bbox.txt",
            "touchdown/touchdown_unseen_split/bbox.txt",
            "touchdown/touchdown_unseen_split/bbox.txt",
        )
    )

    vlnce = Dataset(
        "vlnce",
        "R2R in continuous environments (Krantz et al. 2020), R2R_VLNCE_v1-3_preprocessed",
        "vlnce",
        aliases=["r2r-ce", "vln-ce"],
        note="Extracted from the official R2R_VLNCE_v1-3_preprocessed.zip (250 MB, Google Drive); "
        "each extracted file is checked against the bytes published in "
        "sohamtiwari3120/Discrete-Continuous-VLN.",
    )
    root = "vlnce/R2R_VLNCE_v1-3_preprocessed"
    members = []
    for rel in VLNCE_SPLIT_FILES:
        spec = raw(
            DCVLN,
            f"data/datasets/R2R_VLNCE_v1-3_preprocessed/{rel}",
            f"{root}/{rel}",
            f"{root}/{rel}",
        )
        spec.url = ""
        members.append(spec)
    vlnce.files = members
    vlnce.archive = {
        "url": VLNCE_ZIP,
        "path": "vlnce/R2R_VLNCE_v1-3_preprocessed.zip",
        "strip": "vlnce/",
    }

    rxr = Dataset(
        "rxr",
        "Room-Across-Room (Ku et al. 2020): guide annotations, public GCS bucket rxr-data",
        "rxr",
        requires=["connectivity"],
        note="No checksum is published for the rxr-data bucket; fetched only with "
        "--allow-unverified.",
    )
    for name in (
        "rxr_train_guide.jsonl.gz",
        "rxr_val_seen_guide.jsonl.gz",
        "rxr_val_unseen_guide.jsonl.gz",
        "rxr_test_standard_public_guide.jsonl.gz",
    ):
        rxr.files.append(Spec(f"rxr/{name}", f"https://storage.googleapis.com/rxr-data/{name}"))
    return [conn, r2r, r4r, rev, ndh, tgraph, td, tdu, vlnce, rxr]


MP_TOS = "http://kaldir.vc.in.tum.de/matterport/MP_TOS.pdf"
LICENCES = {
    "matterport3d": {
        "name": "Matterport3D Terms of Use",
        "url": MP_TOS,
        "text": "These files are derived from the Matterport3D dataset and are released under the "
        "Matterport3D Terms of Use (non-commercial academic research only). By downloading "
        "them you agree to those terms; read them at " + MP_TOS + " (access to the "
        "Matterport3D data itself is requested at https://niessner.github.io/Matterport/).",
    },
    "cc-by-4.0": {
        "name": "Creative Commons Attribution 4.0 International (CC BY 4.0)",
        "url": "https://creativecommons.org/licenses/by/4.0/",
        "text": "The Touchdown dataset is licensed under CC BY 4.0: you may share and adapt it, "
        "giving appropriate credit (cite Chen et al., CVPR 2019, and for the unseen split "
        "Schumann & Riezler, ACL 2022). https://creativecommons.org/licenses/by/4.0/",
    },
    "vlnce": {
        "name": "Matterport3D Terms of Use and CC BY-NC-SA 3.0 US",
        "url": MP_TOS,
        "text": "The VLN-CE episodes are data derived from Matterport3D, distributed under the "
        "Matterport3D Terms of Use (" + MP_TOS + ") and the CC BY-NC-SA 3.0 US licence "
        "(https://creativecommons.org/licenses/by-nc-sa/3.0/us/). By downloading them you "
        "agree to both.",
    },
    "rxr": {
        "name": "CC BY 4.0 (RxR annotations) and the Matterport3D Terms of Use",
        "url": MP_TOS,
        "text": "RxR annotations are released under the CC BY 4.0 licence "
        "(https://creativecommons.org/licenses/by/4.0/); the Matterport3D environments they "
        "refer to are governed by the Matterport3D Terms of Use (" + MP_TOS + "). By "
        "downloading them you agree to both.",
    },
}


def build(src: Sources) -> tuple[dict[str, object], dict[str, bytes]]:
    """The registry object and the manifest files (name -> gzipped JSON bytes)."""
    out: dict[str, object] = {"version": 1, "licences": LICENCES, "datasets": {}}
    manifests: dict[str, bytes] = {}
    for d in datasets(src):
        rec: dict[str, object] = {
            "title": d.title,
            "licence": d.licence,
            "requires": d.requires,
            "aliases": d.aliases,
            "files": [entry(s, src) for s in d.files],
        }
        if d.note:
            rec["note"] = d.note
        if d.archive:
            rec["archive"] = d.archive
        groups = []
        for folder, url, fname, specs in d.manifests:
            rows = [_row(entry(s, src), folder, url) for s in specs]
            body = json.dumps(rows, separators=(",", ":"))
            manifests[fname] = gzip.compress(body.encode(), mtime=0)
            groups.append({"folder": folder, "url": url, "manifest": fname, "count": len(rows)})
        if groups:
            rec["groups"] = groups
        out["datasets"][d.name] = rec  # type: ignore[index]
    return out, manifests


def _row(rec: dict[str, object], folder: str, url: str) -> list[object]:
    """A manifest row ``[name, size, sha256]``: the path and URL are the group's plus the name
    (the git blob SHA-1 was checked against the bytes when the row was built)."""
    name = str(rec["path"]).removeprefix(folder)
    if rec["url"] != url + name or "sha256" not in rec:
        raise SystemExit(f"{rec['path']}: a manifest row needs its bytes and the group's URL")
    return [name, rec["size"], rec["sha256"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, required=True, help="the shared data folder")
    ap.add_argument("--git", action="append", default=[], help="owner/name=GITDIR")
    ap.add_argument("--check", action="store_true", help="fail if the committed files differ")
    args = ap.parse_args()
    gits = dict(g.split("=", 1) for g in args.git)
    src = Sources(args.shared, {k: Path(v) for k, v in gits.items()})
    registry, manifests = build(src)
    files = {"registry.json": (json.dumps(registry, indent=1) + "\n").encode(), **manifests}
    if args.check:
        stale = [n for n, b in files.items() if (OUT / n).read_bytes() != b]
        if stale:
            print(f"stale: {', '.join(stale)}", file=sys.stderr)
            return 1
        print("registry up to date")
        return 0
    for name, body in files.items():
        (OUT / name).write_bytes(body)
        print(f"wrote {OUT / name} ({len(body):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
