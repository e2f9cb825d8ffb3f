"""The Hub Space widget of the covariate_complexity module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("covariate_complexity.py", module_type="metric")
launch_gradio_widget(module)
