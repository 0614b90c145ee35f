"""Project tools: the scene generator and the ground-truth loader.

``tools`` may import any project package; nothing in the product imports it.
"""
