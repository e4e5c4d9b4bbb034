"""Serving many people for weeks: the server's front door (``guard``), who a client is and its rate limits
(``clients``), what each client holds (``admission``) and the answers on their way to it (``unsent``), a fair
queue (``fair_queue``), sessions released when their page goes (``sessions``), shared links (``link_store``),
bounded download files (``export_files``) and folders kept bounded (``pruning``), Gradio's page files compressed
once (``static_files``), and every private name of Gradio
they rely on, behind one seam (``gradio_seam``). It imports no view.
"""
