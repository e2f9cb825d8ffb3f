import socket

import numpy as np

from gecobench.explainers import Explainer


class OpensSocket(Explainer):
    name = "opens_socket"

    def explain(self, model, tokenizer, words, targets):
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.connect(("127.0.0.1", 9))
        except Exception:
            pass  # a hostile submission swallows the error; the sandbox must still notice
        return [np.ones(len(w)) for w in words]
