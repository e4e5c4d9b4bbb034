"""What the views draw, as pure functions from numbers and tokens: plotly figures (``figures``, ``attention_maps``,
``panels``, ``walk_steps``, ``attributions``, ``erasure``, ``patching``, ``embedding_maps``, ``training``,
``routes``), colour scales (``colour``), HTML pieces (``markup``, ``token_spans``, ``status``) and the page's style
sheet (``theme``). No gradio here.
"""
