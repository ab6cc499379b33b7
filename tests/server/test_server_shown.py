"""What a team is shown of its own submission: its words as written, no server file, numbers
rounded as the pages show them."""

from __future__ import annotations

from tests.server.helpers import encode, stop_predictions
from vlneval.server.services.scoring import _sanitise
from vlneval.server.services.validation import ServerPaths


def test_a_viewpoint_the_submitter_wrote_as_a_path_is_shown_as_written(sqlite_server) -> None:
    """Only the server's own folders are secret: a slash in the submitter's text is no file of
    the server's, and the team must see which of its values is wrong."""
    srv = sqlite_server
    records = stop_predictions()
    records[0]["trajectory"].append(["/srv/data/x.json", 0.0, 0.0])
    records[1]["instr_id"] = "/home/me/x_0"
    r = srv.submit(srv.alpha, encode(records), name="slash.json")
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert got["messages"] == [
        "slash.json: 1 of 36 episodes have no prediction (first: 100_1); the official scorer "
        "requires all of them (this phase scores complete files only); 1 record has an id not in "
        'the split: "/home/me/x_0" (an id of another type, or with spaces? ids match exactly, '
        'e.g. "100_1")',
        'slash.json: instr_id "100_0": trajectory[1]: viewpoint /srv/data/x.json is not in scan '
        "demoHouse0A",
    ]


def test_every_string_of_a_summary_names_a_server_file_as_server_file() -> None:
    """REVERIE's card names where its boxes lie (``object_boxes.source``): a server file."""
    summary = {
        "protocol": {"object_boxes": {"version": "v1", "source": "/srv/data/reverie/BBox.tar.gz"}},
        "profile_rules": {"notes": ["read from /srv/data/reverie, as given"]},
        "warnings": [],
    }
    out = _sanitise(summary, "preds.json", "/srv/up/p.json", ServerPaths(["/srv/data"]))
    assert out["protocol"] == {"object_boxes": {"version": "v1", "source": "[server file]"}}
    assert out["profile_rules"] == {"notes": ["read from [server file], as given"]}
