"""Paired cloud scenarios (CloudTrail, GuardDuty-shaped alerts)."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from scripts.eval_pack.common import guardduty, siem_rule
from scripts.eval_pack.org.identity_bg import ACCOUNTS, UA, ct
from scripts.eval_pack.org.people import public_ip
from scripts.eval_pack.org.synth_base import Ctx, pair, ticket, z
from scripts.eval_pack.org.write import Scenario

PROD = ACCOUNTS["prod"]
CI_ARN = f"arn:aws:sts::{PROD}:assumed-role/terraform-ci/gha-{{n}}"
TF = "APN/1.0 HashiCorp/1.0 Terraform/1.7.4"


def role_policy(c: Ctx) -> list[Scenario]:
    t = c.when(1 + c.k * 3, 11)
    role = ["booking-app", "reporting-lambda", "edge-cache"][c.k % 3]
    arn = CI_ARN.format(n=f"{t:%m%d}9")
    alert = guardduty(
        type_="Persistence:IAMUser/AnomalousBehavior",
        title="An IAM role policy was changed in an unusual way.",
        description=f"PutRolePolicy on role {role} by the terraform-ci role was anomalous for this principal.",
        severity=5,
        when=z(t),
        account=PROD,
        region="eu-central-1",
        resource={
            "ResourceType": "AccessKey",
            "AccessKeyDetails": {"UserName": "terraform-ci", "UserType": "AssumedRole"},
        },
        action={
            "ActionType": "AWS_API_CALL",
            "AwsApiCallAction": {"Api": "PutRolePolicy", "ServiceName": "iam.amazonaws.com"},
        },
    )
    ip = public_ip(c.rng)
    wide = json.dumps(
        {
            "roleName": role,
            "policyName": "ops-debug",
            "policyDocument": '{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}',
        }
    )
    attack = {
        "title": "CI role credentials used from outside the runners to grant admin",
        "verdicts": ["true_positive"],
        "rationale": f"the call came from {ip} with aws-cli (the runners are 3.120.77.14, Terraform) and attached Action * on Resource * to {role}",
        "severity": ("high", "critical"),
        "techniques": ["T1098.003"],
        "techniques_accept": ["T1078.004"],
        "must": [(ip, "cloudtrail"), ("ops-debug", "cloudtrail")],
        "inject": {
            "cloudtrail": [
                ct(
                    t - timedelta(minutes=2),
                    "prod",
                    "sts.amazonaws.com",
                    "GetCallerIdentity",
                    "AssumedRole",
                    arn,
                    "ASIAX7TQ2LCIEXAMPL",
                    ip,
                    "aws-cli/2.15.3",
                    "{}",
                ),
                ct(
                    t,
                    "prod",
                    "iam.amazonaws.com",
                    "PutRolePolicy",
                    "AssumedRole",
                    arn,
                    "ASIAX7TQ2LCIEXAMPL",
                    ip,
                    "aws-cli/2.15.3",
                    wide,
                ),
                ct(
                    t + timedelta(minutes=3),
                    "prod",
                    "s3.amazonaws.com",
                    "ListBuckets",
                    "AssumedRole",
                    f"arn:aws:sts::{PROD}:assumed-role/{role}/x",
                    "ASIAQ4F1N2BADEXAMP",
                    ip,
                    "aws-cli/2.15.3",
                    "{}",
                ),
            ]
        },
    }
    no = f"CHG-{3700 + c.k}"
    narrow = json.dumps(
        {
            "roleName": role,
            "policyName": "read-docs",
            "policyDocument": '{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::kestrel-booking-docs/*"}]}',
        }
    )
    adm = c.admin(2)
    benign = {
        "title": "pipeline change inside its window",
        "verdicts": ["benign"],
        "rationale": f"Terraform from the CI runner (3.120.77.14) added s3:GetObject on one bucket to {role}, inside approved release {no}",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), ("read-docs", "cloudtrail")],
        "inject": {
            "cloudtrail": [
                ct(
                    t,
                    "prod",
                    "iam.amazonaws.com",
                    "PutRolePolicy",
                    "AssumedRole",
                    arn,
                    "ASIAX7TQ2LCIEXAMPL",
                    "3.120.77.14",
                    TF,
                    narrow,
                )
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(minutes=20),
                    2,
                    no,
                    adm.login,
                    c.org.in_dept("IT")[-1].login,
                    f"aws:prod role {role}",
                    f"Release: grant {role} read access to booking documents",
                )
            ],
        },
    }
    return pair(f"cl-role-policy-{c.k}", "cloud", alert, attack, benign)


def root_login(c: Ctx) -> list[Scenario]:
    t = c.when(2 + c.k * 5, 15)
    root = f"arn:aws:iam::{PROD}:root"
    alert = siem_rule(
        title="AWS root account console sign-in",
        severity="high",
        when=z(t),
        product="CloudTrail rule",
        details={"account": PROD, "event": "ConsoleLogin"},
    )
    ip = public_ip(c.rng)
    attack = {
        "title": "root sign-in without MFA then an access key",
        "verdicts": ["true_positive"],
        "rationale": f"root signed in from {ip} without MFA and created access key; no change ticket",
        "severity": ("critical", "critical"),
        "techniques": ["T1078.004"],
        "techniques_accept": ["T1098.001"],
        "must": [(ip, "cloudtrail"), ("CreateAccessKey", "cloudtrail")],
        "inject": {
            "cloudtrail": [
                ct(
                    t,
                    "prod",
                    "signin.amazonaws.com",
                    "ConsoleLogin",
                    "Root",
                    root,
                    None,
                    ip,
                    UA,
                    '{"MFAUsed": "No"}',
                    region="us-east-1",
                ),
                ct(
                    t + timedelta(minutes=4),
                    "prod",
                    "iam.amazonaws.com",
                    "CreateAccessKey",
                    "Root",
                    root,
                    None,
                    ip,
                    UA,
                    '{"userName": "root"}',
                ),
            ]
        },
    }
    no = f"CHG-{3800 + c.k}"
    adm = c.admin(3)
    egress = c.org.egress["DE"]
    benign = {
        "title": "root used for a billing change under a ticket",
        "verdicts": ["benign"],
        "rationale": f"root signed in with MFA from the Hamburg office ({egress}) inside approved change {no}; only billing calls followed",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), ("PutBillingPreferences", "cloudtrail")],
        "inject": {
            "cloudtrail": [
                ct(
                    t,
                    "prod",
                    "signin.amazonaws.com",
                    "ConsoleLogin",
                    "Root",
                    root,
                    None,
                    egress,
                    UA,
                    '{"MFAUsed": "Yes"}',
                    region="us-east-1",
                ),
                ct(
                    t + timedelta(minutes=3),
                    "prod",
                    "billingconsole.amazonaws.com",
                    "PutBillingPreferences",
                    "Root",
                    root,
                    None,
                    egress,
                    UA,
                    "{}",
                    region="us-east-1",
                ),
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(minutes=15),
                    1,
                    no,
                    adm.login,
                    c.org.in_dept("IT")[-1].login,
                    "aws:prod root",
                    "Update invoice e-mail address (needs root), two-person rule",
                )
            ],
        },
    }
    return pair(f"cl-root-login-{c.k}", "cloud", alert, attack, benign)


def public_bucket(c: Ctx) -> list[Scenario]:
    t = c.when(3 + c.k * 4, 14)
    bucket = ["kestrel-static-assets", "kestrel-brochures", "kestrel-media-kit"][c.k % 3]
    alert = guardduty(
        type_="Policy:S3/BucketAnonymousAccessGranted",
        title="Amazon S3 Block Public Access was disabled for a bucket.",
        description=f"The bucket {bucket} now grants access to everyone.",
        severity=5,
        when=z(t),
        account=PROD,
        region="eu-central-1",
        resource={"ResourceType": "S3Bucket", "S3BucketDetails": [{"Name": bucket}]},
        action={
            "ActionType": "AWS_API_CALL",
            "AwsApiCallAction": {"Api": "PutBucketPolicy", "ServiceName": "s3.amazonaws.com"},
        },
    )
    p = c.person("ENG", offset=5)
    sso = f"arn:aws:sts::{PROD}:assumed-role/AWSReservedSSO_Engineer/{p.upn}"
    ip = public_ip(c.rng)
    outs = [public_ip(c.rng) for _ in range(3)]
    attack = {
        "title": "bucket opened then read from outside",
        "verdicts": ["true_positive"],
        "rationale": f"{p.login}'s SSO session from {ip} opened the bucket; {len(outs)} outside addresses then downloaded its objects",
        "severity": ("high", "critical"),
        "techniques": ["T1530"],
        "techniques_accept": ["T1537", "T1078.004"],
        "must": [(ip, "cloudtrail"), (outs[0], "cloudtrail")],
        "inject": {
            "cloudtrail": [
                ct(
                    t,
                    "prod",
                    "s3.amazonaws.com",
                    "PutBucketPolicy",
                    "AssumedRole",
                    sso,
                    "ASIAPX5ENGEXAMPLE1",
                    ip,
                    UA,
                    json.dumps({"bucketName": bucket, "Principal": "*"}),
                ),
                ct(
                    t - timedelta(minutes=1),
                    "prod",
                    "s3.amazonaws.com",
                    "DeletePublicAccessBlock",
                    "AssumedRole",
                    sso,
                    "ASIAPX5ENGEXAMPLE1",
                    ip,
                    UA,
                    json.dumps({"bucketName": bucket}),
                ),
            ]
            + [
                ct(
                    t + timedelta(minutes=10 + 3 * i),
                    "prod",
                    "s3.amazonaws.com",
                    "GetObject",
                    "AWSAccount",
                    "anonymous",
                    None,
                    o,
                    "curl/8.4.0",
                    json.dumps({"bucketName": bucket, "key": f"exports/2026-03-{i + 1:02d}.csv"}),
                )
                for i, o in enumerate(outs)
            ]
        },
    }
    no = f"CHG-{3900 + c.k}"
    benign = {
        "title": "public website assets by the pipeline under a ticket",
        "verdicts": ["benign"],
        "rationale": f"terraform-ci made the bucket public inside approved change {no} (website assets); only the CDN reads it",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), ("terraform-ci", "cloudtrail")],
        "inject": {
            "cloudtrail": [
                ct(
                    t,
                    "prod",
                    "s3.amazonaws.com",
                    "PutBucketPolicy",
                    "AssumedRole",
                    CI_ARN.format(n=f"{t:%m%d}7"),
                    "ASIAX7TQ2LCIEXAMPL",
                    "3.120.77.14",
                    TF,
                    json.dumps({"bucketName": bucket, "Principal": "*", "Action": "s3:GetObject"}),
                )
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(minutes=30),
                    2,
                    no,
                    c.admin().login,
                    c.org.in_dept("IT")[-1].login,
                    f"aws:prod s3://{bucket}",
                    "Serve new brochure downloads from the bucket through the CDN (public read)",
                )
            ],
        },
    }
    return pair(f"cl-public-bucket-{c.k}", "cloud", alert, attack, benign)


TEMPLATES: list[Any] = [role_policy, root_login, public_bucket]
