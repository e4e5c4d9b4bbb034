"""Per-client token buckets (transformer.explorer.serving.clients.RateLimit) once the table of clients is full."""

from transformer.explorer.serving import clients


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_full_table_forgets_the_least_recently_seen_client_and_still_limits_a_new_one():
    limit = clients.RateLimit(per_second=0.1, burst=1, max_clients=3, clock=Clock())
    for client in ("a", "b", "c"):
        assert limit.take(client) == 0.0  # each spends its one token
    assert limit.take("new") == 0.0  # the table is full: "a", seen longest ago, is forgotten
    assert limit.take("new") > 0  # the new client's bucket was kept: it is limited like any other
    assert list(limit._buckets) == ["b", "c", "new"]
    assert limit.take("c") > 0  # still remembered, still empty
    assert limit.take("a") == 0.0  # forgotten: a full bucket again
