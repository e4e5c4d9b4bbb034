"""What more than one view shares: a control with its address reader (and the endpoint that serves what it switches
to), kept here rather than in one of the views, which import no other view. The weights-or-norms switch of the
Attention and All heads tabs (``weighting``) is one. The layer, head and positional-encoding dimension choices that
the page shares with its views sit in the registry."""
