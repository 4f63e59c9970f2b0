"""python-dbusmock template: the part of ModemManager (1.20+) that reachd reads.

Unlike dbusmock's own `modemmanager` template (which puts modems at .../Modems/N), this one uses
the object paths real ModemManager uses: modems at /org/freedesktop/ModemManager1/Modem/N, bearers
at /org/freedesktop/ModemManager1/Bearer/N. Like real ModemManager, GetManagedObjects lists only
modems (bearers are plain objects, read with Properties.GetAll).

Parameters: {"Garbage": True} makes GetManagedObjects answer with a string instead of
a{oa{sa{sv}}} (a broken or impostor daemon). Modems have the Modem.Signal interface (its
figures empty, as ModemManager sends them until Setup or SetupThresholds enabled them);
{"NoSetupThresholds": True} leaves out its SetupThresholds method (ModemManager before 1.20,
which answers UnknownMethod), {"NoSignal": True} leaves out the whole interface.

Control methods (interface org.freedesktop.DBus.Mock on /org/freedesktop/ModemManager1) are
called by Tests/python/mmctl.py.
"""

import dbus

from dbusmock import MOCK_IFACE, OBJECT_MANAGER_IFACE, mockobject

BUS_NAME = "org.freedesktop.ModemManager1"
MAIN_OBJ = "/org/freedesktop/ModemManager1"
MAIN_IFACE = "org.freedesktop.ModemManager1"
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

MODEM_IFACE = "org.freedesktop.ModemManager1.Modem"
MODEM_3GPP_IFACE = "org.freedesktop.ModemManager1.Modem.Modem3gpp"
BEARER_IFACE = "org.freedesktop.ModemManager1.Bearer"
SIGNAL_IFACE = "org.freedesktop.ModemManager1.Modem.Signal"
SIGNAL_TECHNOLOGIES = ("Cdma", "Evdo", "Gsm", "Umts", "Lte", "Nr5g")

MM_MODEM_STATE_REGISTERED = 8
MM_MODEM_STATE_CONNECTED = 11
MM_MODEM_PORT_TYPE_NET = 2
MM_MODEM_PORT_TYPE_AT = 3
MM_MODEM_PORT_TYPE_QMI = 6


def modem_path(index):
    return f"{MAIN_OBJ}/Modem/{index}"


def bearer_path(index):
    return f"{MAIN_OBJ}/Bearer/{index}"


# Template parameters, kept for the control methods (AddModem adds the Signal interface by them).
PARAMETERS = {}


def load(mock, parameters):
    PARAMETERS.update(parameters)
    mock.AddMethods(MAIN_IFACE, [("ScanDevices", "", "", ""), ("SetLogging", "s", "", "")])
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({"Version": dbus.String("1.20.4")}, signature="sv"))
    if parameters.get("Garbage", False):
        code = "ret = 'not a managed object tree'"
        mock.AddMethod(OBJECT_MANAGER_IFACE, "GetManagedObjects", "", "s", code)
    else:
        code = (f"ret = {{dbus.ObjectPath(k): objects[k].props for k in objects.keys() "
                f"if k.startswith('{MAIN_OBJ}/Modem/')}}")
        mock.AddMethod(OBJECT_MANAGER_IFACE, "GetManagedObjects", "", "a{oa{sa{sv}}}", code)


@dbus.service.method(MOCK_IFACE, in_signature="usuu", out_signature="o")
def AddModem(self, index, net_port, access_technologies, registration_state):
    """Adds modem N with a net port (none when ''), and announces it with InterfacesAdded.

    registration_state 0xffffffff: no Modem3gpp interface (a CDMA or POTS modem)."""
    path = modem_path(index)
    ports = [dbus.Struct((dbus.String(f"cdc-wdm{index}"), dbus.UInt32(MM_MODEM_PORT_TYPE_QMI)), signature="su"),
             dbus.Struct((dbus.String(f"ttyUSB{index}"), dbus.UInt32(MM_MODEM_PORT_TYPE_AT)), signature="su")]
    if net_port:
        ports.insert(0, dbus.Struct((dbus.String(net_port), dbus.UInt32(MM_MODEM_PORT_TYPE_NET)), signature="su"))
    props = {
        "State": dbus.Int32(MM_MODEM_STATE_REGISTERED),
        "AccessTechnologies": dbus.UInt32(access_technologies),
        "SignalQuality": dbus.Struct((dbus.UInt32(71), dbus.Boolean(True)), signature="ub"),
        "Ports": dbus.Array(ports, signature="(su)"),
        "PrimaryPort": dbus.String(f"cdc-wdm{index}"),
        "Bearers": dbus.Array([], signature="o"),
        "Manufacturer": dbus.String("reachd"),
        "Model": dbus.String("mock"),
        "Device": dbus.String(f"/sys/devices/mock/{index}"),
        "Drivers": dbus.Array([dbus.String("qmi_wwan")], signature="s"),
    }
    self.AddObject(path, MODEM_IFACE, props, [])
    if registration_state != 0xFFFFFFFF:
        mockobject.objects[path].AddProperties(MODEM_3GPP_IFACE, dbus.Dictionary({
            "RegistrationState": dbus.UInt32(registration_state),
            "OperatorName": dbus.String("Mock Mobile"),
            "OperatorCode": dbus.String("00101"),
        }, signature="sv"))
    if not PARAMETERS.get("NoSignal", False):
        add_signal_interface(mockobject.objects[path])
    self.object_manager_emit_added(path)
    return dbus.ObjectPath(path)


def signal_setup(modem, rate):
    modem.UpdateProperties(SIGNAL_IFACE, {"Rate": dbus.UInt32(rate)})


def signal_setup_thresholds(modem, settings):
    modem.UpdateProperties(SIGNAL_IFACE, {
        "RssiThreshold": dbus.UInt32(settings.get("rssi-threshold", 0)),
        "ErrorRateThreshold": dbus.Boolean(settings.get("error-rate-threshold", False)),
    })


def add_signal_interface(modem):
    """Modem.Signal as ModemManager 1.20 shows it before anyone set it up. Setup and
    SetupThresholds set Rate and the thresholds (PropertiesChanged), as ModemManager does; the
    mock's call log keeps their arguments (SignalSetupCalls)."""
    props = {"Rate": dbus.UInt32(0), "RssiThreshold": dbus.UInt32(0), "ErrorRateThreshold": dbus.Boolean(False)}
    for name in SIGNAL_TECHNOLOGIES:
        props[name] = dbus.Dictionary({}, signature="sv")
    modem.AddProperties(SIGNAL_IFACE, dbus.Dictionary(props, signature="sv"))
    modem.AddMethod(SIGNAL_IFACE, "Setup", "u", "", signal_setup)
    if not PARAMETERS.get("NoSetupThresholds", False):
        modem.AddMethod(SIGNAL_IFACE, "SetupThresholds", "a{sv}", "", signal_setup_thresholds)


@dbus.service.method(MOCK_IFACE, in_signature="usa{sd}", out_signature="")
def SetSignal(self, index, technology, values):
    """Sets one technology's Modem.Signal figures (e.g. "Lte", {"rsrp": -125.0}), replacing the
    previous ones (an empty dictionary: not reported), and emits PropertiesChanged."""
    figures = dbus.Dictionary({str(k): dbus.Double(v, variant_level=1) for k, v in values.items()}, signature="sv")
    mockobject.objects[modem_path(index)].UpdateProperties(SIGNAL_IFACE, {str(technology): figures})


@dbus.service.method(MOCK_IFACE, in_signature="u", out_signature="as")
def SignalSetupCalls(self, index):
    """The Setup/SetupThresholds calls modem N received, in order: "Setup 30",
    "SetupThresholds error-rate-threshold=false rssi-threshold=5" (keys sorted)."""
    def show(value):
        if isinstance(value, dbus.Boolean):
            return "true" if value else "false"
        return str(value)

    calls = []
    for _, name, args in mockobject.objects[modem_path(index)].call_log:
        if name == "Setup":
            calls.append(f"Setup {int(args[0])}")
        elif name == "SetupThresholds":
            settings = " ".join(f"{k}={show(args[0][k])}" for k in sorted(args[0]))
            calls.append(f"SetupThresholds {settings}".strip())
    return calls


@dbus.service.method(MOCK_IFACE, in_signature="u", out_signature="")
def RemoveModem(self, index):
    """Removes modem N (and its bearers), announcing it with InterfacesRemoved."""
    path = modem_path(index)
    interfaces = list(mockobject.objects[path].props.keys())
    for bearer in list(mockobject.objects[path].props[MODEM_IFACE]["Bearers"]):
        self.RemoveObject(str(bearer))
    self.RemoveObject(path)
    self.EmitSignal(OBJECT_MANAGER_IFACE, "InterfacesRemoved", "oas",
                    [dbus.ObjectPath(path), dbus.Array(interfaces, signature="s")])


@dbus.service.method(MOCK_IFACE, in_signature="usv", out_signature="")
def SetModemProperty(self, index, name, value):
    """Sets a Modem property and emits PropertiesChanged (value as the caller typed it)."""
    mockobject.objects[modem_path(index)].UpdateProperties(MODEM_IFACE, {name: value})


@dbus.service.method(MOCK_IFACE, in_signature="uu", out_signature="")
def SetRegistrationState(self, index, state):
    mockobject.objects[modem_path(index)].UpdateProperties(MODEM_3GPP_IFACE, {"RegistrationState": dbus.UInt32(state)})


@dbus.service.method(MOCK_IFACE, in_signature="uusb", out_signature="o")
def AddBearer(self, modem_index, index, interface, connected):
    """Adds bearer N with a network interface to modem M; the modem's Bearers property changes."""
    path = bearer_path(index)
    self.AddObject(path, BEARER_IFACE, {
        "Interface": dbus.String(interface),
        "Connected": dbus.Boolean(connected),
        "Suspended": dbus.Boolean(False),
        "Properties": dbus.Dictionary({"apn": dbus.String("internet")}, signature="sv"),
    }, [])
    modem = mockobject.objects[modem_path(modem_index)]
    bearers = list(modem.props[MODEM_IFACE]["Bearers"]) + [dbus.ObjectPath(path)]
    modem.UpdateProperties(MODEM_IFACE, {"Bearers": dbus.Array(bearers, signature="o")})
    return dbus.ObjectPath(path)


@dbus.service.method(MOCK_IFACE, in_signature="usb", out_signature="")
def SetBearer(self, index, interface, connected):
    """Changes a bearer's Interface and Connected (PropertiesChanged on the bearer)."""
    mockobject.objects[bearer_path(index)].UpdateProperties(BEARER_IFACE, {
        "Interface": dbus.String(interface), "Connected": dbus.Boolean(connected)})


@dbus.service.method(MOCK_IFACE, in_signature="", out_signature="ybnqiuxtdsogva(su)a{sv}")
def AllTypes(self):
    """One value of every type reachd's D-Bus decoder reads (its test compares them)."""
    return (dbus.Byte(7), dbus.Boolean(True), dbus.Int16(-3), dbus.UInt16(65535), dbus.Int32(-70000),
            dbus.UInt32(4000000000), dbus.Int64(-5000000000), dbus.UInt64(18000000000000000000),
            dbus.Double(2.5), dbus.String("h\u00e9llo"), dbus.ObjectPath("/a/b"), dbus.Signature("a{sv}"),
            dbus.UInt32(9, variant_level=1),
            dbus.Array([dbus.Struct((dbus.String("wwan0"), dbus.UInt32(2)), signature="su")], signature="(su)"),
            dbus.Dictionary({"k": dbus.Boolean(False, variant_level=1)}, signature="sv"))
