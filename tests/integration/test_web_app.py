"""The web page over both backends: a consolidation's audit, forgetting with a preview and lift, time travel; the folder follows each write."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from mnemolog.adapters.agent_context import context_for
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.session import Session, session_id_for
from support.consolidating import render_into, run_consolidation
from support.forgetting import ALL, API, SECRET, clean_memory, quoted
from support.memory import item, save
from support.scripted_models import ScriptedConsolidator, ScriptedExtractor, handle_for
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import FixedClock
from support.web import notice, text_of, web_client

S1 = session_id_for("codex", thread_id(1))
S2 = session_id_for("codex", thread_id(2))
LINT = "Run make lint before pushing."
CSV = "Exports stream CSV through the gateway."


def _edit(op: str, text: str = "", target: str | None = None, evidence=(S1,), title: str = "Testing") -> Edit:
    return Edit(op=op, target=target, kind="knowledge", scope=API, task_group="api", title=title, text=text,
                keywords=("make",), evidence=tuple(str(e) for e in evidence), reason=f"{op} because")


def _store(store_factory, tmp_path: Path):
    """Two sessions, a run adding two items, S2 deleted behind the model's back, a run whose code retires S2's item."""
    clock = FixedClock()
    store = store_factory(clock=clock)
    folder = tmp_path / "sessions"
    write_rollout(folder, thread_id(1), "Fix the retry test.", when="2026-10-20T10:00:00.000Z")
    write_rollout(folder, thread_id(2), "Add the export endpoint.", when="2026-10-21T10:00:00.000Z")
    ingest_files(store, [folder], ALL)
    extract_all(store, ScriptedExtractor(default=lambda t: clean_memory(int(t.meta.native_id[-2:], 16))), ALL)
    first = run_consolidation(store, ScriptedConsolidator(ConsolidationPlan(edits=(
        _edit("add", LINT), _edit("add", CSV, evidence=(S2,), title="CSV"),
    ))), all_sessions=True)
    clock.advance(hours=1)
    time.sleep(0.01)
    store.between_runs = datetime.now(UTC)  # events carry the wall clock's time
    time.sleep(0.01)
    session: Session = store.app.repository.get(S2)
    session.delete("test")
    store.app.save_all(session)
    second = run_consolidation(store, ScriptedConsolidator(lambda req: ConsolidationPlan(edits=(
        _edit("revise", "Run make lint and make test before pushing.", handle_for(req, lambda i: i.title == "Testing")),
    ))), all_sessions=True)
    clock.advance(hours=1)
    render_into(store, store.settings.folder)
    return store, first, second


def test_a_consolidation_page_shows_inputs_edits_as_diffs_and_the_codes_overrides(store_factory, tmp_path: Path) -> None:
    store, first, second = _store(store_factory, tmp_path)
    client, _ = web_client(store)

    runs = client.get("/consolidations").text
    assert runs.index(str(second.consolidation_id)) < runs.index(str(first.consolidation_id))  # newest first

    html = client.get(f"/consolidations/{str(second.consolidation_id)[:8]}").text
    page = text_of(html)
    assert "scripted-consolidator" in page and "scripted" in page and "20 in / 8 out" in page
    assert f"removed {S2}" in page
    assert "code retired item" in page and "all evidence is gone" in page
    revise = html.split('<li class="edit revise">', 1)[1].split("</li>", 1)[0]
    assert "<ins>" in revise and "make test" in "".join(revise.split("<ins>")[1:])
    assert LINT in text_of(revise) and "Run make lint and make test before pushing." in text_of(revise)
    retire = html.split('<li class="edit retire">', 1)[1].split("</li>", 1)[0]
    assert f"<del>{CSV}</del>" in retire


def test_forget_a_value_previews_writes_nothing_then_confirms_and_the_folder_follows(store_factory, tmp_path: Path) -> None:
    store, _, _ = _store(store_factory, tmp_path)
    client, access = web_client(store)
    memory_md = store.settings.folder / "MEMORY.md"
    assert "make test" in memory_md.read_text()
    events = store.app.recorder.max_notification_id()

    preview = client.post("/forget/preview", data={"what": "value", "target": "make test", "scope": API, "csrf_token": access.csrf})
    assert preview.status_code == 200
    shown = text_of(preview.text)
    assert f"A tombstone would be placed in {API}: 1 item(s) would retire" in shown
    assert store.app.recorder.max_notification_id() == events  # nothing written
    assert "make test" in memory_md.read_text()

    done = client.post("/forget", data={"what": "value", "target": "make test", "scope": API, "csrf_token": access.csrf})
    assert done.url.path == "/forget"
    message = notice(done.text)
    assert "placed" in message and "1 item(s) retired" in message and str(store.settings.folder) in message
    assert "make test" not in memory_md.read_text()
    assert "make test" not in context_for(store, API).text
    assert "make test" not in done.text  # the tombstone list never shows a value
    tombstone = done.text.split('data-tombstone="', 1)[1].split('"', 1)[0]

    lifted = client.post(f"/tombstones/{tombstone[:8]}/lift", data={"csrf_token": access.csrf})
    assert notice(lifted.text).startswith(f"tombstone {tombstone[:8]} lifted")
    assert "lifted" in text_of(lifted.text.split('data-tombstone="', 1)[1].split("</tr>", 1)[0])


def test_forget_a_session_or_an_item_previews_what_would_retire(store_factory, tmp_path: Path) -> None:
    store, _, _ = _store(store_factory, tmp_path)
    client, access = web_client(store)
    lint = next(i.item_id for i in store.reads().active_items() if i.title == "Testing")

    session = client.post("/forget/preview", data={"what": "session", "target": thread_id(1), "csrf_token": access.csrf})
    assert f"Session {str(S1)[:8]} would be deleted: 1 item(s) would retire" in text_of(session.text)
    assert f'data-item="{lint}"' in session.text

    item = client.post("/forget/preview", data={"what": "item", "target": str(lint)[:8], "csrf_token": access.csrf})
    assert "The item would retire and its text be tombstoned" in text_of(item.text)

    unknown = client.post("/forget/preview", data={"what": "session", "target": "nope", "csrf_token": access.csrf})
    assert unknown.url.path == "/forget" and "no session" in notice(unknown.text)

    gone = client.post("/forget", data={"what": "item", "target": str(lint), "csrf_token": access.csrf})
    assert notice(gone.text).startswith(f"item {str(lint)[:8]} retired")
    assert str(lint) not in (store.settings.folder / "MEMORY.md").read_text()


def test_the_forget_preview_lists_what_the_confirm_then_changes_even_an_item_that_only_quotes_the_value(
    store_factory, tmp_path: Path
) -> None:
    store = store_factory()
    world = quoted(store)
    client, access = web_client(store)
    form = {"what": "value", "target": SECRET, "scope": "global", "csrf_token": access.csrf}
    events = store.app.recorder.max_notification_id()

    preview = client.post("/forget/preview", data=form)
    assert all(f'data-item="{i}"' in preview.text for i in (world.carrier, world.quoting))
    assert f'data-item="{world.clean}"' not in preview.text
    assert f'data-session="{world.carrier_session}"' in preview.text and f'data-session="{world.clean_session}"' not in preview.text
    assert f'data-note="{world.note}"' in preview.text and f'data-profile="{world.run}"' in preview.text
    assert "2 item(s) would retire, 1 session(s) and 1 note(s) and 1 user profile(s) scrubbed" in text_of(preview.text)
    shown = preview.text.split('name="plan" value="', 1)[1].split('"', 1)[0]
    save(store, item("global", f"Later: {SECRET} again."))  # memory moves between the preview and the confirm
    moved = store.app.recorder.max_notification_id()
    assert moved > events

    stale = client.post("/forget", data={**form, "plan": shown})
    assert "memory changed since the preview" in notice(stale.text) and store.app.recorder.max_notification_id() == moved
    again = client.post("/forget/preview", data=form)
    assert "3 item(s) would retire" in text_of(again.text)
    done = client.post("/forget", data={**form, "plan": again.text.split('name="plan" value="', 1)[1].split('"', 1)[0]})
    assert "3 item(s) retired, 1 session(s), 1 note(s) scrubbed" in notice(done.text)
    assert [i.item_id for i in store.reads().active_items()] == [world.clean]


def test_the_time_page_shows_memory_as_it_stood_and_as_valid(store_factory, tmp_path: Path) -> None:
    store, _, _ = _store(store_factory, tmp_path)
    client, _ = web_client(store)
    at = store.between_runs.isoformat()

    then = client.get("/time", params={"mode": "as_of", "at": at})
    assert CSV in then.text  # before the second run retired it
    assert CSV not in (store.settings.folder / "MEMORY.md").read_text()

    valid = client.get("/time", params={"mode": "valid_at", "at": datetime.now(UTC).isoformat(), "project": API})
    assert "as valid at" in text_of(valid.text) and "make test" in valid.text

    bad = client.get("/time", params={"at": "yesterday-ish"})
    assert "not a date, time or duration" in notice(bad.text)
