"""The views' endpoints through gradio_client on a live server: the same answers as the handlers, the caller's
numbering, and clear errors with no stack trace."""

import numpy as np
import pytest
from app_fixtures import SENTENCE, decoded
from gradio_client.exceptions import AppError

from transformer.explorer import views


@pytest.mark.served
def test_client_knockout_and_compare(client, app):
    knocked = client.predict(SENTENCE, ["L2 H1"], api_name="/knockout")
    assert knocked == views.knockout.knockout(SENTENCE, ["L2 H1"])
    compared = client.predict("good", "not good", layer=1, head=2, api_name="/compare")
    assert (compared["comparison"]["layer"], compared["comparison"]["head"]) == (1, 2)  # the caller's numbering


@pytest.mark.served
def test_client_attributions_and_export(client, app, result):
    answer = client.predict(SENTENCE, target="negative", steps=16, api_name="/attributions")
    assert answer["integrated_gradients"]["steps"] == 16 and answer["target"] == 0
    exported = client.predict(SENTENCE, api_name="/export")["analysis"]
    assert np.array_equal(decoded(exported["attentions"]), result.attentions)


@pytest.mark.served
def test_client_gets_clear_errors_for_bad_indices(client):
    with pytest.raises(AppError, match="Layer must be a whole number from 1 to 2; got 7") as raised:
        client.predict(SENTENCE, layer=7, api_name="/head_internals")
    text = str(raised.value)
    assert "Traceback" not in text and "/work" not in text and ".py" not in text
    assert client.predict(SENTENCE, api_name="/rollout")["tokens"][0] == "a"  # still serving
