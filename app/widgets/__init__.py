"""The widgets of the main screen: the session, the query input, the suggestion list and the
panels of attention, history and copied words; one module each."""
