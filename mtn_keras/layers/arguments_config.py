"""get_config written once for the layers whose config is their constructor's arguments."""

import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keras.layers import Layer as _Base  # the class this mixin comes before
else:
    _Base = object


class ArgumentsConfig(_Base):
    """Mixin before keras.layers.Layer: get_config adds each named argument of __init__, read
    from the attribute of the same name, so the default from_config rebuilds the layer."""

    def get_config(self) -> dict[str, Any]:
        config: dict[str, Any] = super().get_config()
        for name, parameter in inspect.signature(type(self).__init__).parameters.items():
            if name != "self" and parameter.kind is not parameter.VAR_KEYWORD:
                config[name] = getattr(self, name)
        return config
