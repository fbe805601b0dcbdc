"""Leave Streamlit's outgoing queue as shipped in a dashboard server (for ``upload_reply_race.py``).

Python imports ``sitecustomize`` at start-up from the first folder of ``sys.path`` that has one. This
one marks ``ForwardMsgQueue.clear`` as already keeping uploader answers, so
:func:`dashboard.upload_replies.keep_file_url_replies` leaves it alone: the server then drops an
answer a starting script run clears, as Streamlit 1.67 does.
"""

from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

ForwardMsgQueue.clear.keeps_file_url_replies = True
