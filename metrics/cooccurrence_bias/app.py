"""The Hub Space widget of the cooccurrence_bias module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("cooccurrence_bias.py", module_type="measurement")
launch_gradio_widget(module)
