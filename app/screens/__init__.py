"""The app's screens: the main one (session, list, keys, attention), the history's and the
dialogs."""
