"""os-ken controller apps shipped with oxflow (run them with
`python -m oxflow.controller --app oxflow.apps.<name>`):

- learning_switch: an OpenFlow 1.3 L2 learning switch.
- recorder: logs every asynchronous switch message as JSON lines.
"""
