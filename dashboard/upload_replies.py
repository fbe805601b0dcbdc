"""Keep the server's answer to an uploader's request when a script run starts.

When files are dropped on an ``st.file_uploader``, Streamlit's page first asks the server, over the
websocket, where to send them (a ``FileURLsRequest``), and lists the files, and sends them, only
when the answer (a ``file_urls_response``) arrives; it waits for it without a time limit. The
server puts the answer in the session's outgoing queue, which its event loop sends a moment later.
But every script run that starts clears that queue (``ForwardMsgQueue.clear`` with
``retain_lifecycle_msgs=True``, from the script's thread), keeping only messages about the run's
life and toasts: in Streamlit 1.67 an answer still waiting there is dropped. The uploader then
never lists the files and the server never receives them, with no message. It happens when a run
starts between the answer and the next send: an upload arriving while the previous one's run
starts, on a loaded server whose event loop sends late.

:func:`keep_file_url_replies` makes that clear keep the answers too (the page handles them
whenever they come). It changes nothing else: a clear that empties the queue to send it keeps
nothing, as before.
"""

from __future__ import annotations

__all__ = ["REPLY", "keep_file_url_replies"]

#: the ForwardMsg field of the server's answer to an uploader's FileURLsRequest
REPLY = "file_urls_response"


def keep_file_url_replies() -> bool:
    """Make Streamlit's per-session outgoing queue keep uploader answers when a script run clears
    it. Idempotent; True when in place (False when this Streamlit has no such queue: nothing done)."""
    try:
        from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
    except ImportError:
        return False
    clear = getattr(ForwardMsgQueue, "clear", None)
    if clear is None or not hasattr(ForwardMsgQueue(), "_queue"):
        return False
    if getattr(clear, "keeps_file_url_replies", False):
        return True

    def clear_keeping_replies(self, retain_lifecycle_msgs: bool = False, fragment_ids_this_run=None) -> None:
        replies = [m for m in self._queue if m.WhichOneof("type") == REPLY] if retain_lifecycle_msgs else []
        clear(self, retain_lifecycle_msgs=retain_lifecycle_msgs, fragment_ids_this_run=fragment_ids_this_run)
        if replies:
            kept = {id(m) for m in self._queue}
            # before the retained messages: no delta index points into the queue right after a clear
            self._queue = [m for m in replies if id(m) not in kept] + self._queue

    clear_keeping_replies.keeps_file_url_replies = True
    clear_keeping_replies.__doc__ = clear.__doc__
    ForwardMsgQueue.clear = clear_keeping_replies
    return True
