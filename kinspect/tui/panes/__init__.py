"""The inspector's tabs, one pane class each, and the registry that lists them.

A pane owns what its tab shows and the keys that act in it. It gets the inspector's
state from the app as an attribute (`InspectorPane.view`), draws it when shown (a
hidden tab only notes that it is behind), and asks the app for a site, a shape, a tab or
a reload by message (`kinspect.tui.panes.requests`); it never reaches into the app.
"""
