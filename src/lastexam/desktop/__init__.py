"""The desktop of GUI trials: a private X server, window manager, panel, screen recorder and
window monitor started inside the trial's own sandbox, and the collection of what they (and
the agent) leave in the desktop folder."""
