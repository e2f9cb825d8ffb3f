"""The Gradio widget of a metric module's Hub Space.

``evaluate.utils.launch_gradio_widget`` builds its form with ``gr.inputs``, which Gradio removed in 4.0, so the
module Spaces use this one: the module's card, a JSON object of ``compute`` arguments, and the result.
"""

from __future__ import annotations

import json
from typing import Any


def example_arguments(module: Any) -> dict[str, Any]:
    """A skeleton of ``compute`` arguments: every input feature of the module with an empty list."""
    features = module.features[0] if isinstance(module.features, list) else module.features
    return {name: [] for name in features}


def compute_from_json(module: Any, arguments: str) -> dict[str, Any]:
    """``module.compute(**json.loads(arguments))``; a clear error names what is wrong with the text."""
    try:
        kwargs = json.loads(arguments)
    except json.JSONDecodeError as error:
        raise ValueError(f"the arguments are not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}") from None
    if not isinstance(kwargs, dict):
        raise TypeError(f"the arguments must be a JSON object of compute() keyword arguments, got {type(kwargs).__name__}")
    return module.compute(**kwargs)


def metric_widget(module: Any) -> Any:
    """A ``gr.Blocks`` page for ``module`` (an ``evaluate`` module): its description, a JSON box, the result."""
    import gradio as gr

    def run(arguments: str) -> dict[str, Any]:
        try:
            return compute_from_json(module, arguments)
        except (ValueError, TypeError) as error:
            raise gr.Error(str(error)) from None

    with gr.Blocks(title=module.name) as demo:
        gr.Markdown(f"# {module.name}\n\n{module.description}")
        arguments = gr.Code(json.dumps(example_arguments(module), indent=2), language="json",
                            label="compute() arguments (JSON object)")
        button = gr.Button("Compute", variant="primary")
        result = gr.JSON(label="result")
        button.click(run, arguments, result, api_name="compute")
        gr.Markdown(f"## Inputs\n\n```\n{module.inputs_description}\n```")
    return demo
