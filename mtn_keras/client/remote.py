"""The backend of a TensorFlow Serving REST endpoint (`python -m mtn_keras.serve` or TensorFlow
Serving itself): the standard library's urllib and json, no TensorFlow, no new dependency.

The address names the model: `http://HOST:PORT/v1/models/NAME`, optionally with
`/versions/N` and `:predict`. The signatures come from `GET .../metadata`; each call is
`POST ...:predict` with `signature_name` and the columnar `inputs`, answered by `outputs`.
"""

import json
import re
import urllib.error
import urllib.request

from mtn_keras.client.suggester import SuggestError

MODEL_URL = re.compile(
    r"^(https?://[^/?#]+(?:/[^?#]*)?/v1/models/[^/:?#]+(?:/versions/\d+)?)(?::predict)?/?$"
)


def is_url(model) -> bool:
    """Whether `model` names a server rather than a path."""
    return isinstance(model, str) and model.startswith(("http://", "https://"))


class Rest:
    """A model behind TensorFlow Serving's REST API; `timeout` seconds for each request."""

    def __init__(self, url: str, timeout: float = 30.0):
        found = MODEL_URL.match(url)
        if not found:
            raise SuggestError(
                f"{url} does not name a model: give http://HOST:PORT/v1/models/NAME, as "
                "TensorFlow Serving's REST API has it"
            )
        self.url, self.timeout = found.group(1), timeout
        metadata = self._request(self.url + "/metadata")
        try:
            found = metadata["metadata"]["signature_def"]["signature_def"]
            self.signatures = {name: set(sig.get("outputs", {})) for name, sig in found.items()}
        except (KeyError, TypeError, AttributeError):
            raise SuggestError(f"{self.url}/metadata did not list the model's signatures") from None

    def run(self, name, inputs):
        body = {"signature_name": name, "inputs": inputs}
        answer = self._request(self.url + ":predict", body)
        outputs = answer.get("outputs") if isinstance(answer, dict) else None
        if not isinstance(outputs, dict):
            raise SuggestError(f"{self.url}:predict answered without the outputs of `{name}`")
        return outputs

    def _request(self, url, body=None):
        """The JSON answer of a GET (no body) or a POST of `body` to `url`."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise SuggestError(f"{url} answered HTTP {error.code}: {_said(error)}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise SuggestError(f"Cannot reach {url}: {reason}") from None
        except ValueError as error:
            raise SuggestError(f"{url} did not answer JSON: {error}") from None


def _said(error) -> str:
    """The `error` of a TensorFlow Serving error answer, else its text's beginning."""
    text = error.read().decode("utf-8", "replace")
    try:
        return json.loads(text)["error"]
    except (ValueError, KeyError, TypeError):
        return text[:300] or error.reason
