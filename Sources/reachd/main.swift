print("reachd: not built yet")
