"""Synthetic cloud and identity scenarios (true positives and the alerts that waste time)."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

from scripts.eval_pack.common import Case, Table, at, graph_alert, guardduty, okta_hook, siem_rule
from scripts.eval_pack.tables import (
    audit,
    cloudtrail,
    ct,
    dns_log,
    flows,
    gcp_audit,
    okta,
    okta_log,
    signin,
    signins,
    spread,
)

ACCT = "111122223333"
T0 = "2025-11-03T09:00:00Z"


def cloud() -> list[Case]:
    root = f"arn:aws:iam::{ACCT}:root"
    tor = "185.220.101.42"
    admin = f"arn:aws:iam::{ACCT}:user/maria.lopez"
    ci = f"arn:aws:sts::{ACCT}:assumed-role/terraform-ci/GitHubActions"
    ops = f"arn:aws:sts::{ACCT}:assumed-role/ops-admin/sam.okafor"
    background = [
        ct(at(T0, 60 * i), "DescribeInstances", admin, "203.0.113.10", source="ec2.amazonaws.com")
        for i in range(6)
    ]
    return [
        Case(
            id="aws-root-console-login-tor",
            title="Root console sign-in from a Tor exit node",
            category="cloud",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=guardduty(
                type_="UnauthorizedAccess:IAMUser/TorIPCaller",
                severity=8,
                when=at(T0, 3600),
                title="API ConsoleLogin was invoked from a Tor exit node IP address.",
                description=f"The root user signed in to the console from Tor exit {tor}.",
                resource={
                    "ResourceType": "AccessKey",
                    "AccessKeyDetails": {"UserName": "Root", "UserType": "Root"},
                },
                action={
                    "ActionType": "AWS_API_CALL",
                    "AwsApiCallAction": {
                        "Api": "ConsoleLogin",
                        "RemoteIpDetails": {"IpAddressV4": tor},
                    },
                },
            ),
            tables=[
                cloudtrail(
                    [
                        *background,
                        ct(
                            at(T0, 3600),
                            "ConsoleLogin",
                            root,
                            tor,
                            source="signin.amazonaws.com",
                            agent="Mozilla/5.0 (Windows NT 10.0; rv:115.0) Firefox/115.0",
                            user_type="Root",
                        ),
                        ct(
                            at(T0, 3700),
                            "CreateUser",
                            root,
                            tor,
                            params='{"userName": "support-sync"}',
                            user_type="Root",
                        ),
                        ct(
                            at(T0, 3720),
                            "CreateAccessKey",
                            root,
                            tor,
                            params='{"userName": "support-sync"}',
                            user_type="Root",
                        ),
                        ct(
                            at(T0, 3740),
                            "AttachUserPolicy",
                            root,
                            tor,
                            user_type="Root",
                            params='{"userName": "support-sync", "policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"}',
                        ),
                    ]
                )
            ],
            intel=[
                {
                    "indicator": tor,
                    "services": {
                        "abuseipdb": {
                            "found": True,
                            "flagged": True,
                            "abuse_confidence_score": 100,
                            "total_reports": 2417,
                            "is_tor": True,
                            "country": "DE",
                        }
                    },
                }
            ],
            must=[tor, "support-sync", "AdministratorAccess", "CreateAccessKey"],
            techniques=["T1078.004"],
            forbidden=["benign"],
        ),
        Case(
            id="aws-portprobe-public-web",
            title="Port probe on the public web server from a scanner",
            category="cloud",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=guardduty(
                type_="Recon:EC2/PortProbeUnprotectedPort",
                severity=2,
                when=at(T0, 600),
                title="Unprotected port on EC2 instance i-0web01 is being probed.",
                description="Port 443 on i-0web01 is being probed by 167.94.138.35 (censys).",
                resource={
                    "ResourceType": "Instance",
                    "InstanceDetails": {"InstanceId": "i-0web01"},
                },
                action={
                    "ActionType": "PORT_PROBE",
                    "PortProbeAction": {
                        "PortProbeDetails": [
                            {
                                "LocalPortDetails": {"Port": 443},
                                "RemoteIpDetails": {
                                    "IpAddressV4": "167.94.138.35",
                                    "Organization": {"Asn": "398324", "AsnOrg": "CENSYS-ARIN-01"},
                                },
                            }
                        ]
                    },
                },
            ),
            tables=[cloudtrail(background)],
            intel=[
                {
                    "indicator": "167.94.138.35",
                    "services": {
                        "abuseipdb": {
                            "found": True,
                            "flagged": False,
                            "abuse_confidence_score": 0,
                            "usage_type": "Data Center/Web Hosting/Transit",
                            "isp": "Censys, Inc.",
                            "domain": "censys.io",
                            "is_whitelisted": True,
                        }
                    },
                }
            ],
            must=["167.94.138.35", "censys"],
            forbidden=["compromised", "exfiltration"],
        ),
        Case(
            id="aws-ci-role-iam-changes",
            title="IAM policy attached by the Terraform CI role",
            category="cloud",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=siem_rule(
                title="IAM policy change by a non-human principal",
                severity="medium",
                when=at(T0, 1800),
                user="terraform-ci",
                details={"event": "AttachRolePolicy", "role": "app-reporting"},
            ),
            tables=[
                cloudtrail(
                    [
                        *background,
                        *spread(
                            at(T0, 1750),
                            4,
                            15,
                            lambda i, w: ct(
                                w,
                                ["CreateRole", "AttachRolePolicy", "TagRole", "GetRole"][i],
                                ci,
                                "4.175.112.9",
                                agent="APN/1.0 HashiCorp/1.0 Terraform/1.9.5",
                                params='{"roleName": "app-reporting"}',
                                user_type="AssumedRole",
                            ),
                        ),
                    ]
                )
            ],
            must=["terraform-ci", "app-reporting", "Terraform"],
            forbidden=["compromised", "attacker"],
        ),
        Case(
            id="gcp-public-bucket-website",
            title="Public ACL on the static website bucket",
            category="cloud",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert={
                "notificationConfigName": "organizations/4211/notificationConfigs/scc",
                "finding": {
                    "name": "organizations/4211/sources/91/findings/f7e1",
                    "parent": "organizations/4211/sources/91",
                    "resourceName": "//storage.googleapis.com/www-example-static",
                    "state": "ACTIVE",
                    "category": "PUBLIC_BUCKET_ACL",
                    "eventTime": at(T0, 900),
                    "createTime": at(T0, 900),
                    "severity": "HIGH",
                    "findingClass": "MISCONFIGURATION",
                    "description": "Bucket www-example-static is readable by allUsers.",
                },
            },
            tables=[
                gcp_audit(
                    [
                        audit(
                            at(T0, 880),
                            "web-deployer@example-prod.iam.gserviceaccount.com",
                            "10.8.0.4",
                            "storage.setIamPermissions",
                            "projects/_/buckets/www-example-static",
                            "add allUsers roles/storage.objectViewer (website hosting, change CHG-2231)",
                        ),
                        audit(
                            at(T0, 300),
                            "web-deployer@example-prod.iam.gserviceaccount.com",
                            "10.8.0.4",
                            "storage.objects.create",
                            "projects/_/buckets/www-example-static/objects/index.html",
                            "upload index.html",
                        ),
                    ]
                )
            ],
            must=["www-example-static", "web-deployer@example-prod.iam.gserviceaccount.com"],
            forbidden=["data breach", "exfiltration"],
        ),
        Case(
            id="gcp-iam-external-owner",
            title="Project owner granted to an outside Gmail account",
            category="cloud",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=siem_rule(
                title="Owner role granted to an external identity",
                severity="high",
                when=at(T0, 5400),
                user="dev.lead@example.com",
                details={"method": "SetIamPolicy", "project": "example-prod"},
            ),
            tables=[
                gcp_audit(
                    [
                        audit(
                            at(T0, 100),
                            "dev.lead@example.com",
                            "198.51.100.23",
                            "compute.instances.list",
                            "projects/example-prod",
                            "list instances",
                        ),
                        audit(
                            at(T0, 5300),
                            "dev.lead@example.com",
                            "45.83.64.19",
                            "google.login.LoginService.loginSuccess",
                            "accounts",
                            "sign-in, new device",
                        ),
                        audit(
                            at(T0, 5400),
                            "dev.lead@example.com",
                            "45.83.64.19",
                            "SetIamPolicy",
                            "projects/example-prod",
                            "add user:cloud.helper.2291@gmail.com roles/owner",
                        ),
                        audit(
                            at(T0, 5460),
                            "cloud.helper.2291@gmail.com",
                            "45.83.64.19",
                            "google.iam.admin.v1.CreateServiceAccountKey",
                            "projects/example-prod/serviceAccounts/billing-export",
                            "create key",
                        ),
                    ]
                )
            ],
            must=["cloud.helper.2291@gmail.com", "roles/owner", "45.83.64.19"],
            techniques=["T1098"],
            forbidden=["benign"],
        ),
        Case(
            id="aws-cryptomining-dns",
            title="EC2 instance querying a Monero mining pool",
            category="cloud",
            verdict="true_positive",
            severity=("medium", "critical"),
            alert=guardduty(
                type_="CryptoCurrency:EC2/BitcoinTool.B!DNS",
                severity=8,
                when=at(T0, 7200),
                title="EC2 instance i-0batch7 is querying a domain name associated with cryptocurrency.",
                description="i-0batch7 queried pool.supportxmr.com.",
                resource={
                    "ResourceType": "Instance",
                    "InstanceDetails": {"InstanceId": "i-0batch7"},
                },
                action={
                    "ActionType": "DNS_REQUEST",
                    "DnsRequestAction": {"Domain": "pool.supportxmr.com", "Protocol": "UDP"},
                },
            ),
            tables=[
                cloudtrail(
                    [
                        *background,
                        ct(
                            at(T0, 7000),
                            "RunInstances",
                            ops,
                            "203.0.113.10",
                            source="ec2.amazonaws.com",
                            user_type="AssumedRole",
                        ),
                    ]
                ),
                dns_log(
                    spread(
                        at(T0, 7150),
                        12,
                        300,
                        lambda i, w: {
                            "event_time": w,
                            "client_ip": "10.0.7.41",
                            "query": "pool.supportxmr.com",
                            "qtype": "A",
                            "answer": "141.94.96.71",
                            "rcode": "NOERROR",
                        },
                    )
                ),
                flows(
                    spread(
                        at(T0, 7160),
                        12,
                        300,
                        lambda i, w: {
                            "event_time": w,
                            "src_ip": "10.0.7.41",
                            "src_port": 40100 + i,
                            "dst_ip": "141.94.96.71",
                            "dst_port": 3333,
                            "proto": "tcp",
                            "bytes_out": 5200,
                            "bytes_in": 9100,
                            "duration_s": 299.0,
                            "service": None,
                        },
                    )
                ),
            ],
            must=["pool.supportxmr.com", "3333", "10.0.7.41"],
            techniques=["T1496"],
            forbidden=["false positive"],
        ),
        Case(
            id="aws-ssm-patch-window",
            title="SSM SendCommand to many instances during a change window",
            category="cloud",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=siem_rule(
                title="Remote command execution on 12 EC2 instances via SSM",
                severity="high",
                when=at(T0, 79200),
                user="ops-admin",
                details={"event": "SendCommand", "document": "AWS-RunPatchBaseline"},
            ),
            tables=[
                cloudtrail(
                    [
                        *background,
                        *spread(
                            at(T0, 79200),
                            12,
                            5,
                            lambda i, w: ct(
                                w,
                                "SendCommand",
                                ops,
                                "10.0.0.12",
                                source="ssm.amazonaws.com",
                                agent="aws-cli/2.15 md/command#ssm.send-command",
                                user_type="AssumedRole",
                                params=f'{{"documentName": "AWS-RunPatchBaseline", "instanceIds": ["i-0app{i:02d}"], '
                                '"comment": "CHG-2240 monthly patching"}',
                            ),
                        ),
                    ]
                )
            ],
            must=["AWS-RunPatchBaseline", "CHG-2240"],
            forbidden=["lateral movement", "attacker"],
        ),
    ]


def identity() -> list[Case]:
    spray_ip = "91.92.240.17"
    users = [f"user{i:02d}@example.com" for i in range(40)]
    return [
        Case(
            id="okta-password-spray",
            title="Password spray against 40 Okta accounts, one success",
            category="identity",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=okta_hook(
                event_type="security.threat.detected",
                message="Password spray detected",
                actor="system@okta.com",
                ip=spray_ip,
                when=at(T0, 1300),
                country="Netherlands",
            ),
            tables=[
                okta_log(
                    [
                        *spread(
                            T0,
                            40,
                            30,
                            lambda i, w: okta(
                                w,
                                "user.session.start",
                                users[i],
                                spray_ip,
                                "FAILURE",
                                "INVALID_CREDENTIALS",
                                "Netherlands",
                            ),
                        ),
                        okta(
                            at(T0, 1250),
                            "user.session.start",
                            "j.doe@example.com",
                            spray_ip,
                            country="Netherlands",
                        ),
                        okta(
                            at(T0, 1290),
                            "user.mfa.factor.deactivate",
                            "j.doe@example.com",
                            spray_ip,
                            country="Netherlands",
                        ),
                    ]
                )
            ],
            must=[spray_ip, "j.doe@example.com", "40"],
            techniques=["T1110.003"],
            forbidden=["benign"],
        ),
        Case(
            id="okta-new-country-vpn-egress",
            title="Sign-in from a new country via the corporate VPN",
            category="identity",
            verdict="false_positive",
            accept=["benign"],
            severity=("info", "low"),
            alert=okta_hook(
                event_type="user.session.start",
                message="User login to Okta",
                actor="a.kowalski@example.com",
                ip="165.225.72.14",
                when=at(T0, 2000),
                country="Germany",
                severity="WARN",
            ),
            tables=[
                okta_log(
                    [
                        *spread(
                            at(T0, -86400),
                            30,
                            3000,
                            lambda i, w: okta(
                                w,
                                "user.session.start",
                                f"staff{i % 9}@example.com",
                                "165.225.72.14",
                                country="Germany",
                            ),
                        ),
                        okta(
                            at(T0, 2000),
                            "user.session.start",
                            "a.kowalski@example.com",
                            "165.225.72.14",
                            country="Germany",
                        ),
                    ]
                )
            ],
            intel=[
                {
                    "indicator": "165.225.72.14",
                    "services": {
                        "abuseipdb": {
                            "found": False,
                            "flagged": False,
                            "isp": "Zscaler, Inc.",
                            "usage_type": "Data Center/Web Hosting/Transit",
                        }
                    },
                }
            ],
            must=["165.225.72.14", "Zscaler"],
            forbidden=["account takeover"],
        ),
        Case(
            id="entra-travel-signin-japan",
            title="Entra sign-in from Japan by a travelling employee",
            category="identity",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=graph_alert(
                title="Atypical travel",
                severity="medium",
                category="InitialAccess",
                when=at(T0, 40000),
                description="Sign-ins from the Netherlands and "
                "Japan within 14 hours for k.mueller@example.com.",
            ),
            tables=[
                signins(
                    [
                        signin(
                            at(T0, -10000),
                            "k.mueller@example.com",
                            "145.2.10.4",
                            "NL",
                            city="Amsterdam",
                            device="dev-7f21",
                            compliant=True,
                        ),
                        signin(
                            at(T0, 40000),
                            "k.mueller@example.com",
                            "203.104.128.9",
                            "JP",
                            city="Tokyo",
                            device="dev-7f21",
                            compliant=True,
                        ),
                        signin(
                            at(T0, 41000),
                            "k.mueller@example.com",
                            "203.104.128.9",
                            "JP",
                            city="Tokyo",
                            app="Microsoft Teams",
                            device="dev-7f21",
                            compliant=True,
                        ),
                    ]
                )
            ],
            must=["dev-7f21", "Tokyo"],
            forbidden=["compromised", "attacker"],
        ),
        Case(
            id="okta-mfa-push-fatigue",
            title="MFA push bombing, accepted at night",
            category="identity",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=okta_hook(
                event_type="user.authentication.auth_via_mfa",
                message="Authentication of user via MFA",
                actor="p.singh@example.com",
                ip="102.129.152.44",
                when=at(T0, 66000),
                country="South Africa",
            ),
            tables=[
                okta_log(
                    [
                        *spread(
                            at(T0, 64500),
                            25,
                            60,
                            lambda i, w: okta(
                                w,
                                "system.push.send_factor_verify_push",
                                "p.singh@example.com",
                                "102.129.152.44",
                                "DENY",
                                "USER_REJECTED",
                                "South Africa",
                            ),
                        ),
                        okta(
                            at(T0, 66000),
                            "user.authentication.auth_via_mfa",
                            "p.singh@example.com",
                            "102.129.152.44",
                            country="South Africa",
                        ),
                        okta(
                            at(T0, 66200),
                            "user.session.access_admin_app",
                            "p.singh@example.com",
                            "102.129.152.44",
                            country="South Africa",
                        ),
                    ]
                )
            ],
            must=["102.129.152.44", "25", "p.singh@example.com"],
            techniques=["T1621"],
            forbidden=["benign"],
        ),
        Case(
            id="entra-legacy-auth-blocked",
            title="Legacy IMAP sign-in reported as successful",
            category="identity",
            verdict="false_positive",
            accept=["benign"],
            severity=("info", "low"),
            alert=siem_rule(
                title="Successful legacy authentication sign-in",
                severity="medium",
                when=at(T0, 3000),
                user="finance@example.com",
                details={"client_app": "IMAP4", "ip": "20.83.41.7"},
            ),
            tables=[
                signins(
                    spread(
                        at(T0, 2900),
                        8,
                        20,
                        lambda i, w: signin(
                            w,
                            "finance@example.com",
                            "20.83.41.7",
                            "US",
                            status=53003,
                            app="Office 365 Exchange Online",
                            client="IMAP4",
                            mfa="none",
                        ),
                    )
                )
            ],
            must=["53003", "IMAP4"],
            forbidden=["account takeover", "mailbox was accessed"],
        ),
        Case(
            id="okta-admin-grant-helpdesk",
            title="Help-desk admin role granted by the IT director",
            category="identity",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=okta_hook(
                event_type="user.account.privilege.grant",
                message="Grant user privilege",
                actor="it.director@example.com",
                ip="198.51.100.7",
                when=at(T0, 4000),
                severity="INFO",
            ),
            tables=[
                okta_log(
                    [
                        okta(
                            at(T0, 3900),
                            "user.session.start",
                            "it.director@example.com",
                            "198.51.100.7",
                        ),
                        okta(
                            at(T0, 4000),
                            "user.account.privilege.grant",
                            "it.director@example.com",
                            "198.51.100.7",
                            target="l.nguyen@example.com: HELP_DESK_ADMIN (ticket IT-5531)",
                        ),
                    ]
                )
            ],
            must=["l.nguyen@example.com", "IT-5531"],
            forbidden=["privilege escalation attack"],
        ),
        Case(
            id="entra-inbox-forwarding-rule",
            title="Inbox rule forwarding mail to an outside address",
            category="identity",
            verdict="true_positive",
            severity=("medium", "critical"),
            alert=graph_alert(
                title="Suspicious inbox forwarding rule",
                severity="high",
                category="Exfiltration",
                when=at(T0, 9000),
                service="microsoftDefenderForCloudApps",
                description="r.ito@example.com created a rule forwarding invoices "
                "to billing-archive@protonmail.com.",
            ),
            tables=[
                signins(
                    [
                        signin(
                            at(T0, 8800),
                            "r.ito@example.com",
                            "193.36.119.50",
                            "RO",
                            city="Bucharest",
                            mfa="none",
                            app="Office 365 Exchange Online",
                        ),
                        signin(
                            at(T0, -20000),
                            "r.ito@example.com",
                            "145.2.10.9",
                            "NL",
                            city="Amsterdam",
                            device="dev-11aa",
                            compliant=True,
                        ),
                    ]
                ),
                Table(
                    "eval.m365.audit_log",
                    "Microsoft 365 unified audit log: operation, "
                    "user_id, client_ip, parameters. SYNTHETIC data written for socbot's eval pack.",
                    [
                        {
                            "event_time": at(T0, 8950),
                            "operation": "New-InboxRule",
                            "user_id": "r.ito@example.com",
                            "client_ip": "193.36.119.50",
                            "parameters": "Name=.; SubjectContainsWords=invoice; ForwardTo=billing-archive@protonmail.com; MarkAsRead=True",
                        },
                        {
                            "event_time": at(T0, 8900),
                            "operation": "MailItemsAccessed",
                            "user_id": "r.ito@example.com",
                            "client_ip": "193.36.119.50",
                            "parameters": "Folder=Inbox; Count=212",
                        },
                    ],
                ),
            ],
            must=["billing-archive@protonmail.com", "193.36.119.50"],
            techniques=["T1114.003"],
            forbidden=["benign"],
        ),
        Case(
            id="okta-bruteforce-deactivated",
            title="Brute force against a deactivated Okta account",
            category="identity",
            verdict="false_positive",
            accept=["benign"],
            severity=("info", "low"),
            alert=okta_hook(
                event_type="user.account.lock",
                message="Max sign in attempts exceeded",
                actor="old.contractor@example.com",
                ip="5.188.206.14",
                when=at(T0, 12000),
                result="FAILURE",
                country="Russia",
            ),
            tables=[
                okta_log(
                    spread(
                        at(T0, 11000),
                        30,
                        30,
                        lambda i, w: okta(
                            w,
                            "user.session.start",
                            "old.contractor@example.com",
                            "5.188.206.14",
                            "FAILURE",
                            "USER_DEACTIVATED",
                            "Russia",
                        ),
                    )
                )
            ],
            must=["USER_DEACTIVATED", "5.188.206.14"],
            forbidden=["successful login"],
        ),
    ]
