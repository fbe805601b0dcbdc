"""The server's answer to an uploader's request for upload URLs survives a script run starting
before it was sent (Streamlit 1.67 clears the session's outgoing queue then and dropped it, so the
uploader never listed the files), and is sent exactly once."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue  # noqa: E402

from dashboard.upload_replies import keep_file_url_replies  # noqa: E402


def reply(request_id: str) -> ForwardMsg:
    msg = ForwardMsg()
    msg.file_urls_response.response_id = request_id
    msg.file_urls_response.file_urls.add(file_id="f1", upload_url="/_stcore/upload_file/s/f1")
    return msg


def text_delta(body: str, index: int) -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path[:] = [0, index]
    msg.delta.new_element.markdown.body = body
    return msg


def kinds(messages) -> list[str]:
    return [m.WhichOneof("type") for m in messages]


def test_a_run_starting_keeps_the_uploader_answer_and_drops_the_old_run_s_elements():
    assert keep_file_url_replies() and keep_file_url_replies()  # idempotent
    queue = ForwardMsgQueue()
    queue.enqueue(text_delta("old run", 0))
    queue.enqueue(reply("r1"))
    queue.enqueue(text_delta("old run too", 1))
    queue.clear(retain_lifecycle_msgs=True)  # what a script run starting does
    assert kinds(queue._queue) == ["file_urls_response"]
    assert queue._queue[0].file_urls_response.response_id == "r1"
    queue.enqueue(text_delta("new run", 0))
    queue.enqueue(text_delta("new run, replaced", 0))  # deltas still coalesce by their path
    sent = queue.flush()
    assert kinds(sent) == ["file_urls_response", "delta"]
    assert sent[1].delta.new_element.markdown.body == "new run, replaced"
    assert queue.flush() == []  # sent once: a flush keeps nothing


def test_a_fragment_run_keeps_the_answer_once():
    keep_file_url_replies()
    queue = ForwardMsgQueue()
    queue.enqueue(reply("r2"))
    queue.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=["frag"])
    assert [m.file_urls_response.response_id for m in queue.flush()] == ["r2"]
