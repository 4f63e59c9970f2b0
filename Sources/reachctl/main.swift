print("reachctl: not built yet")
