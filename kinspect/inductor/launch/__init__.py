"""The user's code as kinspect starts it: a model file loaded by its convention, a torchrun
rank joined before the model is imported. Imports nothing else of `kinspect.inductor`.
"""
